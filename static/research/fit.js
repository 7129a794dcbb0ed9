// Live progress of a fit run: polls the run's progress.json (items embedded; epoch, losses and where early
// stopping stands) while it is queued or running,
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
        $("embed-progress").hidden = p.phase !== "embedding";
        $("fit-progress").hidden = p.phase !== "fitting";
        if (p.phase === "embedding" && p.items) {
          $("items-done").textContent = p.items_done ?? 0;
          $("items").textContent = p.items;
          $("progress-bar").style.width = Math.min(100, (100 * (p.items_done || 0)) / p.items) + "%";
        }
        if (p.phase === "fitting" && p.epoch) {
          $("start-of").hidden = !(p.starts > 1);
          $("start").textContent = p.start ?? "–";
          $("starts").textContent = p.starts ?? "–";
          $("epoch").textContent = p.epoch;
          $("max-epochs").textContent = p.max_epochs || "–";
          $("best-epoch").textContent = p.best_epoch ?? "–";
          $("best-loss").textContent = fmt(p.best_loss);
          $("monitored").textContent = p.monitored === "train" ? "train" : "validation";
          $("patience-left").textContent = p.patience_left ?? "–";
          $("patience").textContent = p.patience ?? "–";
          $("train-loss").textContent = fmt(p.train_loss);
          $("val-loss").textContent = fmt(p.val_loss);
          // how close early stopping is: epochs since the best one, of the patience (not the epoch cap)
          if (p.patience) $("progress-bar").style.width = Math.min(100, (100 * (p.patience - (p.patience_left ?? p.patience))) / p.patience) + "%";
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
