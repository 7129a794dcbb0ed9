"""CAIMIRA fit speed and accuracy on a synthetic set at the paper's scale.

133 agents, 3,042 items, 768-d embeddings, about 340,000 responses drawn from known parameters
(``irt.synthetic.make_synthetic``). Reports, on the same validation pairs (10%, seeded hash):

* the oracle: the true probabilities;
* ``fit`` as shipped: full batch (dense agent x item matrix), Adam, lr 0.005, lambda 1e-5, m = 5;
* the same with a small L2 penalty on the text maps W_R, W_D (``lambda_weights``, not in the paper);
* a plain mini-batch loop with the paper's settings (batch 512, same lr and lambda), the same
  trainer with ``batch_size=512``.

Run from the repository root::

    nice python benchmarks/irt_fit.py                 # CPU, all three fits, seed 0
    nice python benchmarks/irt_fit.py --seeds 0 1 2   # three synthetic worlds
    python benchmarks/irt_fit.py --device cuda        # on a GPU, when there is one

Each fit is timed end to end (split, model, training, metrics); generating the data is not.
Results also go to ``benchmarks/out/irt_fit.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from irt import FitConfig, fit, hash_split  # noqa: E402
from irt.metrics import binary_metrics  # noqa: E402
from irt.synthetic import make_synthetic  # noqa: E402


def run_seed(seed: int, args: argparse.Namespace) -> dict:
    t = time.perf_counter()
    s = make_synthetic(seed=seed)
    gen_s = time.perf_counter() - t
    data = s.data
    assert data.embeddings is not None
    base = FitConfig(model="caimira", dims=5, seed=seed, device=args.device)
    mask = hash_split(data.split_keys("pair"), base.val_fraction, base.seed)
    val = data.responses.subset(mask)
    oracle = binary_metrics(s.true_proba(val.agent_idx, val.item_idx), val.ruling)
    print(
        f"\nsynthetic set, seed {seed}: {len(data.agents)} agents, {len(data.items)} items, "
        f"{data.embeddings.shape[1]}-d embeddings, {len(data.responses):,} responses "
        f"({int((~mask).sum()):,} train / {len(val):,} val), m = 5; generated in {gen_s:.1f} s"
    )
    print(f"{'':34s} {'seconds':>8s} {'epochs':>7s} {'val acc':>8s} {'val BCE':>8s} {'acc - oracle':>13s}")
    print(f"{'oracle (true parameters)':34s} {'':>8s} {'':>7s} {oracle['accuracy']:8.4f} {oracle['bce']:8.4f}")
    rows: dict[str, dict] = {"oracle": oracle}
    runs = [("full batch (shipped default)", base)]
    if args.l2_row > 0:
        runs.append((f"full batch + L2 {args.l2_row:g} on W_R, W_D", replace(base, lambda_weights=args.l2_row)))
    if not args.skip_minibatch:
        runs.append(("mini-batch 512 (paper settings)", replace(base, batch_size=512, max_seconds=args.minibatch_seconds)))
    for name, cfg in runs:
        res = fit(data, cfg)
        m = res.metrics
        v = m["val"]
        note = f" (stopped: {m['stopped']})" if m["stopped"] != "patience" else ""
        print(
            f"{name:34s} {m['seconds']:8.1f} {m['epochs']:7d} {v['accuracy']:8.4f} {v['bce']:8.4f} "
            f"{v['accuracy'] - oracle['accuracy']:+13.4f}{note}",
            flush=True,
        )
        rows[name] = {k: m[k] for k in ("seconds", "epochs", "best_epoch", "stopped", "val", "config")}
    baseline = rows.get("mini-batch 512 (paper settings)")
    if baseline:  # time as a ratio against the plain mini-batch loop measured in this same run
        for name, row in rows.items():
            if name not in ("oracle", "mini-batch 512 (paper settings)"):
                print(f"{name:34s} time / mini-batch 512: {row['seconds'] / baseline['seconds']:.2f}x")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0], help="seeds of the synthetic worlds (and fits)")
    ap.add_argument("--minibatch-seconds", type=float, default=300.0, help="wall-clock budget of the batch-512 loop")
    ap.add_argument("--skip-minibatch", action="store_true")
    ap.add_argument("--l2-row", type=float, default=3e-4, help="lambda_weights of the extra full-batch row with an "
                    "L2 penalty on W_R, W_D (not in the paper); 0 drops the row")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    print(f"device {args.device}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    rows: dict[str, dict] = {}
    for seed in args.seeds:
        rows[f"seed {seed}"] = run_seed(seed, args)
    out = Path(__file__).resolve().parent / "out"
    out.mkdir(exist_ok=True)
    (out / "irt_fit.json").write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
