// Annotation pages: keyboard shortcuts (1-9 pick, Enter sends, s opens the skip-or-flag box, which asks
// before it skips), the open-game timer, no double sends, drafts kept over a reload. No key does anything
// while a text field has focus.
(function () {
  "use strict";
  const answerForm = document.getElementById("answer-form");
  const skipForm = document.getElementById("skip-form");
  const skipBox = document.getElementById("skip-box");
  const confirmRow = document.getElementById("skip-confirm");
  const actionsRow = document.getElementById("skip-actions");
  const skipNote = document.getElementById("skip-note");

  function typing(el) {
    return el && (el.tagName === "TEXTAREA" || el.isContentEditable ||
      (el.tagName === "INPUT" && !["radio", "checkbox", "hidden", "button", "submit"].includes(el.type)));
  }

  // Drafts: what the annotator typed on this page (a written question, the open game's word, the skip note,
  // an authored entry) is kept in this tab's sessionStorage under the campaign and item, put back after a
  // reload, and dropped once the page's answer is sent. Only text comes back: the item's time still runs
  // from when the server first showed it, and the open game's timer still counts what the server says.
  const draftRoot = document.querySelector("[data-draft-key]");
  const draftKey = draftRoot ? "annotate-draft:" + draftRoot.dataset.draftKey : "";
  const draftOwner = draftRoot ? draftRoot.dataset.draftOwner || "" : ""; // the assignment: never another's draft
  const draftFields = () => (draftRoot ? Array.from(draftRoot.querySelectorAll("textarea, input"))
    .filter((el) => typing(el) && el.name && el.form && el.form.id) : []);
  const fieldId = (el) => el.form.id + ":" + el.name;

  function draftRead() {
    try {
      const saved = JSON.parse(window.sessionStorage.getItem(draftKey) || "null");
      return saved && saved.owner === draftOwner && saved.fields ? saved.fields : {};
    } catch (e) { return {}; }
  }
  function draftSave() {
    const fields = {};
    draftFields().forEach((el) => { if (el.value) fields[fieldId(el)] = el.value; });
    try {
      if (Object.keys(fields).length) {
        window.sessionStorage.setItem(draftKey, JSON.stringify({ owner: draftOwner, fields: fields }));
      } else {
        window.sessionStorage.removeItem(draftKey);
      }
    } catch (e) { /* storage full or refused: the draft is simply not kept */ }
  }
  function draftClear() {
    if (!draftKey) return;
    try { window.sessionStorage.removeItem(draftKey); } catch (e) { /* nothing kept */ }
  }
  if (draftRoot) {
    const saved = draftRead();
    draftFields().forEach((el) => {
      const value = saved[fieldId(el)];
      if (typeof value === "string" && !el.value) el.value = value;
    });
    draftRoot.addEventListener("input", (ev) => { if (typing(ev.target)) draftSave(); });
    // the item's two forms clear it in send(); a plain form (authoring) clears it as it goes
    draftRoot.querySelectorAll("form").forEach((f) => {
      if (f !== answerForm && f !== skipForm) f.addEventListener("submit", draftClear);
    });
  }

  function send(form) {
    if (!form || form.dataset.sent) return;
    if (form === answerForm && !form.checkValidity()) { form.reportValidity(); return; }
    draftClear();
    form.dataset.sent = "1";
    form.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    form.submit();
  }

  const boxOpen = () => Boolean(skipBox && skipBox.open);
  const asking = () => Boolean(confirmRow && !confirmRow.hidden);
  const reasons = () => (skipForm ? skipForm.querySelectorAll("input[name=reason]") : []);

  function back() { // from the confirm step to the reasons
    if (!asking()) return;
    confirmRow.hidden = true;
    if (actionsRow) actionsRow.hidden = false;
    const checked = skipForm.querySelector("input[name=reason]:checked");
    if (checked) checked.focus();
  }
  function openBox() {
    skipBox.open = true;
    const checked = skipForm.querySelector("input[name=reason]:checked") || reasons()[0];
    if (checked) checked.focus();
  }
  function closeBox() {
    back();
    skipBox.open = false;
    skipBox.querySelector("summary").focus();
  }
  function ask() { // the confirm step: nothing is skipped until the annotator says yes
    if (!confirmRow) { send(skipForm); return; }
    if (!skipBox.open) skipBox.open = true;
    confirmRow.hidden = false;
    if (actionsRow) actionsRow.hidden = true;
    document.getElementById("skip-yes").focus();
  }

  // Pages with a single "continue" link (instructions, practice feedback): Enter follows it.
  const enterLink = document.querySelector("[data-enter]");

  function boxKey(ev, target) { // keys while the skip-or-flag box is open; true when handled
    const key = ev.key;
    if (key === "Escape") { ev.preventDefault(); if (asking()) back(); else closeBox(); return true; }
    if (asking()) {
      if (key === "Enter" && target && target.tagName === "BUTTON") return true; // the focused button's own click
      if (key === "Enter" || key === "y" || key === "Y") { ev.preventDefault(); send(skipForm); return true; }
      if (key === "n" || key === "N") { ev.preventDefault(); back(); }
      return true;
    }
    if (key === "Enter") {
      if (target && target.tagName === "BUTTON" && skipForm.contains(target)) return true;
      ev.preventDefault();
      ask();
      return true;
    }
    if (typing(target)) return true; // the note: letters and digits are text
    if (/^[1-9]$/.test(key)) {
      const input = reasons()[Number(key) - 1];
      if (input) { ev.preventDefault(); input.checked = true; input.focus(); }
      return true;
    }
    if ((key === "f" || key === "F") && skipNote) { ev.preventDefault(); skipNote.focus(); return true; }
    return key === "s" || key === "S";
  }

  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const target = ev.target;
    if (boxOpen() && boxKey(ev, target)) return;
    if (ev.key === "Enter") {
      if (target && target.tagName === "TEXTAREA" && ev.shiftKey) return; // a new line
      if (target && target.tagName === "BUTTON") return; // its own click
      if (answerForm) { ev.preventDefault(); send(answerForm); return; }
      if (enterLink) { ev.preventDefault(); window.location.href = enterLink.href; }
      return;
    }
    if (ev.key === "Escape" && typing(target)) { target.blur(); return; } // then 1-9 and s work again
    if (typing(target) || !answerForm) return;
    if (/^[1-9]$/.test(ev.key)) {
      const inputs = answerForm.querySelectorAll("input[type=radio], input[type=checkbox]");
      const input = inputs[Number(ev.key) - 1];
      if (!input) return;
      ev.preventDefault();
      if (input.type === "radio") input.checked = true; else input.checked = !input.checked;
      input.focus();
    } else if ((ev.key === "s" || ev.key === "S") && skipBox) {
      ev.preventDefault();
      openBox();
    }
  });

  if (skipBox) {
    skipBox.addEventListener("toggle", () => { if (!skipBox.open) back(); });
    document.getElementById("skip-cancel").addEventListener("click", closeBox);
    document.getElementById("skip-yes").addEventListener("click", () => send(skipForm));
    document.getElementById("skip-no").addEventListener("click", back);
  }
  if (answerForm) {
    answerForm.addEventListener("submit", (ev) => { ev.preventDefault(); send(answerForm); });
  }
  if (skipForm) {
    skipForm.addEventListener("submit", (ev) => { ev.preventDefault(); ask(); }); // ask first, then send
  }
  const focus = document.querySelector("[data-autofocus]");
  if (focus) {
    focus.focus();
    if (focus.value && focus.setSelectionRange) focus.setSelectionRange(focus.value.length, focus.value.length);
  }

  // ghigliottina-open: the server says how much time is left; at zero the answer goes as typed.
  const timer = document.getElementById("timer");
  if (timer && answerForm) {
    const total = Number(timer.dataset.totalMs) || 60000;
    const deadline = performance.now() + Number(timer.dataset.remainingMs || 0);
    const text = document.getElementById("timer-text");
    const tick = () => {
      const left = Math.max(0, deadline - performance.now());
      timer.style.width = (100 * left / total).toFixed(1) + "%";
      if (text) text.textContent = Math.ceil(left / 1000) + " s left";
      if (left <= 0) {
        draftClear();
        answerForm.noValidate = true;
        answerForm.dataset.sent = "1";
        answerForm.submit();
        return;
      }
      requestAnimationFrame(tick);
    };
    tick();
  }
})();
