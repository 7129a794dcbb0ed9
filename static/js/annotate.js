// Annotation pages: keyboard shortcuts (1-9 pick, Enter sends, s opens the skip-or-flag box, which asks
// before it skips), the open-game timer, no double sends. No key does anything while a text field has focus.
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

  function send(form) {
    if (!form || form.dataset.sent) return;
    if (form === answerForm && !form.checkValidity()) { form.reportValidity(); return; }
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
  if (focus) focus.focus();

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
