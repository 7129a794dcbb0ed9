// Live progress of an agent run: polls progress.json while the run is queued or running, moves the bar,
// and reloads the page once the run has finished (so the cancel / resume buttons and the error show).
(function () {
  "use strict";
  const box = document.getElementById("agent-status");
  if (!box) return;
  const url = box.dataset.progressUrl;
  let status = box.dataset.status;
  if (status !== "queued" && status !== "running") return;
  const $ = (id) => document.getElementById(id);

  async function poll() {
    try {
      const resp = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (resp.ok) {
        const d = await resp.json();
        $("status-label").textContent = d.status;
        $("status-label").className = "status " + d.status;
        $("phase").textContent = d.phase || "";
        $("done").textContent = d.done;
        $("total").textContent = d.total;
        $("correct").textContent = d.correct;
        $("written").textContent = d.written;
        $("progress-bar").style.width = Math.min(100, d.percent || 0) + "%";
        if (d.finished) { window.location.reload(); return; }
        status = d.status;
      }
    } catch (err) { /* the server is busy or restarting: try again */ }
    setTimeout(poll, 1000);
  }
  poll();
})();
