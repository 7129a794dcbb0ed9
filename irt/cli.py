"""``python -m irt embed | fit | predict`` (see CAIMIRA.md)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from .api import predict, with_embeddings
from .data import (
    FitData,
    IRTDataError,
    load_embeddings,
    load_pairs,
    read_jsonl,
    save_embeddings,
    validate_queries,
)
from .embed import DEFAULT_MODEL, DEFAULT_TEMPLATE, embed_queries
from .io import load_fit, save_fit, write_jsonl
from .models import MODELS
from .train import L1_FORMS, REFIT_FORMS, EpochStatus, FitConfig, fit


def _cache(args: argparse.Namespace) -> str | bool:
    return False if args.no_cache else (args.cache or True)


def _add_embedder_args(p: argparse.ArgumentParser, flag: str) -> None:
    p.add_argument(flag, dest="embedder", default=DEFAULT_MODEL, help=f"sentence-transformers path or name (default: {DEFAULT_MODEL}, bundled, offline)")
    p.add_argument("--template", default=DEFAULT_TEMPLATE, help="text to embed: 'default' (text + answer [+ summary]) or a format string over query fields, e.g. '{text}'")
    p.add_argument("--cache", default=None, help="embedding cache directory (default: $IRT_CACHE_DIR or ~/.cache/thinkalike-irt)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the embedding cache")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m irt", description="CAIMIRA and classic IRT fits.")
    sub = ap.add_subparsers(dest="command", required=True)

    e = sub.add_parser("embed", help="embed query texts into an .npz")
    e.add_argument("--queries", required=True)
    e.add_argument("--out", required=True)
    e.add_argument("--device", default="cpu")
    _add_embedder_args(e, "--model")

    f = sub.add_parser("fit", help="fit a model and write a fit directory")
    f.add_argument("--queries", required=True)
    f.add_argument("--agents", required=True)
    f.add_argument("--responses", required=True)
    f.add_argument("--out", required=True)
    f.add_argument("--embeddings", help=".npz from 'embed' (caimira without it embeds the queries itself)")
    f.add_argument("--model", default="caimira", choices=list(MODELS))
    f.add_argument("--dims", type=int, default=5)
    val = f.add_mutually_exclusive_group()
    val.add_argument("--val-fraction", type=float, default=0.1)
    val.add_argument("--val-responses", help="explicit validation responses (JSON lines)")
    f.add_argument("--val-group", default="pair", help="what the validation hash keeps together: pair | query | a query field such as orig_qid")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--device", default="cpu")
    f.add_argument("--epochs", type=int, default=None, help="maximum epochs (default 3000 full-batch, 100 mini-batch)")
    f.add_argument("--patience", type=int, default=None, help="epochs without improvement (default 100 full batch, 3 mini-batch)")
    f.add_argument("--patience-growth", type=float, default=None,
                   help="patience at least this times the best epoch so far (default 0.5 full batch, 0 mini-batch)")
    f.add_argument("--batch-size", type=int, default=None, help="default: full batch")
    f.add_argument("--lr", type=float, default=0.005)
    f.add_argument("--temperature", type=float, default=1.0)
    f.add_argument("--lambda-skill", type=float, default=1e-5)
    f.add_argument("--lambda-difficulty", type=float, default=1e-5)
    f.add_argument("--l1", choices=list(L1_FORMS), default="mean",
                   help="L1 on skills and difficulties averaged over the batch's responses (mean, default) "
                   "or summed over them as in the paper (paper: batch-size times stronger)")
    f.add_argument("--lambda-weights", type=float, default=None,
                   help="L2 on W_R, W_D (not in the paper; default 3e-4 full batch, 0 mini-batch; 0 = the paper)")
    f.add_argument("--input-scaling", choices=["rms", "none"], default=None,
                   help="caimira: scale centred embeddings to unit RMS (default full batch) or not (default mini-batch)")
    f.add_argument("--refit", choices=list(REFIT_FORMS), default=None,
                   help="after early stopping, continue from the best epoch on all responses, the fit's own "
                   "validation split included, for best_epoch * n_val / n_train epochs (continue; the default "
                   "full batch) or keep the best epoch as it is (none; the default with mini-batches)")
    f.add_argument("--starts", type=int, default=None,
                   help="starts fitted until the fixed patience runs out; the one with the lowest validation "
                   "BCE goes on (default 1)")
    f.add_argument("--redraws", type=int, default=None,
                   help="rival starts, at most, for a fit that ends with two skill dimensions that overlap "
                   "(centred correlation over agents > 0.4): escapes a worse local solution (default 2 full "
                   "batch with at least 5 m agents, 0 mini-batch; 0: no check)")
    f.add_argument("--max-seconds", type=float, default=None, help="wall-clock budget; the best epoch so far is kept")
    f.add_argument("--threads", type=int, default=None, help="torch CPU threads for the fit (small fits: 1 is best)")
    f.add_argument("--no-progress", action="store_true")
    _add_embedder_args(f, "--embedder")

    p = sub.add_parser("predict", help="p(correct) for (query, agent) pairs, new queries included")
    p.add_argument("--fit", required=True)
    p.add_argument("--queries", required=True)
    p.add_argument("--pairs", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--embeddings", help=".npz with embeddings of new queries (default: embed them with the fit's embedder)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--cache", default=None)
    p.add_argument("--no-cache", action="store_true")
    return ap


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cmd_embed(args: argparse.Namespace) -> int:
    located = list(read_jsonl(args.queries))
    queries = validate_queries(located)
    ids, emb, meta = embed_queries(
        queries, model=args.embedder, template=args.template, cache=_cache(args), device=args.device,
        where=[w for w, _ in located],
    )
    save_embeddings(args.out, ids, emb, meta)
    _log(f"embedded {len(ids)} queries ({emb.shape[1]}-d, {meta['model']}) -> {args.out}")
    return 0


def cmd_fit(args: argparse.Namespace) -> int:
    data = FitData.from_files(args.queries, args.agents, args.responses, args.embeddings, args.val_responses)
    if args.model == "caimira" and data.embeddings is None:
        _log(f"embedding {len(data.items)} queries with {args.embedder} (cached)")
        where = [w for w, _ in read_jsonl(args.queries)]
        data = with_embeddings(
            data, model=args.embedder, template=args.template, cache=_cache(args), device=args.device, where=where
        )
    cfg = FitConfig(
        model=args.model,
        dims=args.dims,
        temperature=args.temperature,
        lr=args.lr,
        lambda_skill=args.lambda_skill,
        lambda_difficulty=args.lambda_difficulty,
        l1=args.l1,
        lambda_weights=args.lambda_weights,
        refit=args.refit,
        starts=args.starts,
        redraws=args.redraws,
        input_scaling=args.input_scaling,
        max_seconds=args.max_seconds,
        threads=args.threads,
        batch_size=args.batch_size,
        max_epochs=args.epochs,
        patience=args.patience,
        patience_growth=args.patience_growth,
        val_fraction=0.0 if args.val_responses else args.val_fraction,
        val_group=args.val_group,
        seed=args.seed,
        device=args.device,
    )
    bar: Any = None
    on_epoch = None
    if not args.no_progress:
        from tqdm import tqdm

        # a counter, not a bar against the epoch cap: early stopping usually ends the fit long before it
        bar = tqdm(desc=f"fit {args.model}", unit="epoch", file=sys.stderr)

        def on_epoch(st: EpochStatus) -> None:
            bar.update(1)
            if st.epoch % 10 == 0 or st.epoch == 1 or st.patience_left == 0:
                post = {"train": f"{st.train_loss:.4f}"}
                if st.val_loss is not None:
                    post["val"] = f"{st.val_loss:.4f}"
                post.update(best=f"{st.best_loss:.4f}@{st.best_epoch}", patience=f"{st.patience_left}/{st.patience}",
                            start=str(st.start))
                bar.set_postfix(post, refresh=False)

    try:
        result = fit(data, cfg, on_epoch=on_epoch)
    finally:
        if bar is not None:
            bar.close()
    save_fit(result, args.out, agents=data.agents)
    m = result.metrics
    summary: dict[str, Any] = {"model": m["model"], "dims": m["dims"], "seconds": m["seconds"], "epochs": m["epochs"],
                              "l1": m["l1"], "refit_epochs": (m.get("refit") or {}).get("epochs", 0),
                              "start": (m.get("starts") or {}).get("chosen", 0)}
    if m["val"]:
        summary.update({f"val_{k}": m["val"][k] for k in ("accuracy", "bce", "auc")})
    _log(json.dumps(summary))
    _log(f"fit written to {args.out}")
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    result = load_fit(args.fit, device=args.device)
    located = list(read_jsonl(args.queries))
    queries = validate_queries(located, require_text=False)
    pairs = load_pairs(args.pairs, {a: i for i, a in enumerate(result.agent_ids)})
    emb = None
    if args.embeddings:
        ids, mat, _ = load_embeddings(args.embeddings)
        emb = (ids, mat)
    p = predict(result, pairs, queries, embeddings=emb, cache=_cache(args), device=args.device)
    write_jsonl(args.out, ({"query_id": q, "agent_id": a, "p": float(x)} for (q, a), x in zip(pairs, p, strict=True)))
    n_new = len({q for q, _ in pairs} - set(result.item_ids))
    _log(f"{len(pairs)} predictions ({n_new} queries not in the fit) -> {args.out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "embed":
            return cmd_embed(args)
        if args.command == "fit":
            return cmd_fit(args)
        return cmd_predict(args)
    except IRTDataError as exc:
        _log(f"error: {exc}")
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
