// Live progress of a fit run: polls the run's progress.json (epoch, losses) while it is queued or running,
// draws the validation loss as a sparkline, and reloads the page once the run has finished.
(function () {
  "use strict";
  const box = document.getElementById("status");
  if (!box) return;
  const url = box.dataset.progressUrl;
  let status = box.dataset.status;
  if (status !== "queued" && status !== "running") return;
  const losses = [];
  const $ = (id) => document.getElementById(id);
  const fmt = (x) => (x === null || x === undefined ? "–" : Number(x).toFixed(4));

  function spark() {
    const svg = $("loss-spark");
    if (!svg || losses.length < 2) return;
    const w = svg.width.baseVal.value, h = svg.height.baseVal.value;
    const lo = Math.min(...losses), hi = Math.max(...losses), span = hi - lo || 1;
    const pts = losses.map((v, i) => `${(i / (losses.length - 1)) * (w - 4) + 2},${h - 2 - ((v - lo) / span) * (h - 4)}`);
    svg.innerHTML = `<polyline points="${pts.join(" ")}"></polyline>`;
  }

  async function poll() {
    try {
      const resp = await fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (resp.ok) {
        const data = await resp.json();
        const p = data.progress || {};
        $("status-label").textContent = data.status;
        $("status-label").className = "status " + data.status;
        $("phase").textContent = p.phase || "";
        if (p.epoch) {
          $("epoch").textContent = p.epoch;
          $("max-epochs").textContent = p.max_epochs || "–";
          $("train-loss").textContent = fmt(p.train_loss);
          $("val-loss").textContent = fmt(p.val_loss);
          if (p.max_epochs) $("progress-bar").style.width = Math.min(100, (100 * p.epoch) / p.max_epochs) + "%";
          const v = p.val_loss ?? p.train_loss;
          if (v !== null && v !== undefined && (losses.length === 0 || losses.at(-1) !== v)) { losses.push(v); spark(); }
        }
        if (data.status !== status && data.status !== "running") { window.location.reload(); return; }
        status = data.status;
      }
    } catch (err) { /* the server is busy or restarting: try again */ }
    setTimeout(poll, 1000);
  }
  poll();
})();
