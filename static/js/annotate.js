// Annotation pages: keyboard shortcuts (1-9 pick, Enter sends, s skips), the open-game timer, no double sends.
(function () {
  "use strict";
  const answerForm = document.getElementById("answer-form");
  const skipForm = document.getElementById("skip-form");

  function typing(el) {
    return el && (el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && !["radio", "checkbox", "hidden"].includes(el.type)));
  }

  function send(form) {
    if (!form || form.dataset.sent) return;
    if (form === answerForm && !form.checkValidity()) { form.reportValidity(); return; }
    form.dataset.sent = "1";
    form.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    form.submit();
  }

  // Pages with a single "continue" link (instructions, practice feedback): Enter follows it.
  const enterLink = document.querySelector("[data-enter]");

  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const target = ev.target;
    if (ev.key === "Enter") {
      if (target && target.tagName === "TEXTAREA" && ev.shiftKey) return; // a new line
      if (target && target.id === "skip-note") { ev.preventDefault(); send(skipForm); return; }
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
    } else if (ev.key === "s" || ev.key === "S") {
      ev.preventDefault();
      send(skipForm);
    }
  });

  if (answerForm) {
    answerForm.addEventListener("submit", (ev) => { ev.preventDefault(); send(answerForm); });
  }
  if (skipForm) {
    skipForm.addEventListener("submit", (ev) => { ev.preventDefault(); send(skipForm); });
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
