"""A fit directory: what ``fit`` writes and ``predict`` reads.

::

    metrics.json    metrics (CAIMIRA.md fields and more) and the settings of the fit
    agents.jsonl    {"id", "name", "type", "skill": [m floats]}
    items.jsonl     {"id", "relevance", "difficulty", "effective_difficulty"[, "discrimination"]}
    history.jsonl   {"epoch", "train_bce", "val_bce"} per epoch
    config.json     model kind, constructor arguments, fit settings, embedder (model + template)
    model.pt        the model's state dict and the bank's item parameters (tensors only)

``save_fit`` writes into a fresh sibling directory and swaps it in at the end, so an existing fit
is replaced only by a complete one.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .data import IRTDataError, read_jsonl
from .models import build_model
from .train import FitConfig, FitResult

__all__ = ["save_fit", "load_fit", "write_jsonl", "FORMAT_VERSION"]

FORMAT_VERSION = 1


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def _item_records(result: FitResult) -> Iterable[dict[str, Any]]:
    p = result.item_params
    d = p["difficulty"]
    d2 = d[:, None] if d.ndim == 1 else d
    if "relevance" in p:
        rel: np.ndarray | None = p["relevance"]
    elif d.ndim == 1 and result.config.model != "mirt":
        rel = np.ones_like(d2)  # 1PL / 2PL are CAIMIRA with m = 1: relevance 1
    else:
        rel = None
    eff = d2 * rel if rel is not None else d2
    disc = p.get("discrimination")
    for j, qid in enumerate(result.item_ids):
        rec: dict[str, Any] = {
            "id": qid,
            "relevance": None if rel is None else [float(x) for x in rel[j]],
            "difficulty": [float(x) for x in d2[j]],
            "effective_difficulty": [float(x) for x in eff[j]],
        }
        if disc is not None:
            rec["discrimination"] = [float(x) for x in np.atleast_1d(disc[j])]
        yield rec


def save_fit(result: FitResult, directory: str | Path, agents: list[dict[str, Any]] | None = None) -> Path:
    """Write ``result`` to ``directory`` (created, or replaced whole once the new one is complete)."""
    target = Path(directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        skills = result.skills
        skills2 = skills[:, None] if skills.ndim == 1 else skills
        names = {a["id"]: a.get("name", a["id"]) for a in agents or []}
        with open(tmp / "metrics.json", "w", encoding="utf-8") as fh:
            json.dump(result.metrics, fh, indent=2)
        write_jsonl(
            tmp / "agents.jsonl",
            (
                {"id": a, "name": names.get(a, a), "type": t, "skill": [float(x) for x in skills2[i]]}
                for i, (a, t) in enumerate(zip(result.agent_ids, result.agent_types, strict=True))
            ),
        )
        write_jsonl(tmp / "items.jsonl", _item_records(result))
        write_jsonl(tmp / "history.jsonl", result.history)
        config = {
            "format": FORMAT_VERSION,
            "model": result.config.model,
            "init_kwargs": result.model.init_kwargs(),
            "fit_config": {k: v for k, v in vars(result.config).items()},
            "embedder": result.embedder,
        }
        with open(tmp / "config.json", "w", encoding="utf-8") as fh:
            json.dump(config, fh, indent=2)
        state = {k: v.detach().cpu() for k, v in result.model.state_dict().items()}
        params = {k: torch.as_tensor(v) for k, v in result.item_params.items()}
        torch.save({"state_dict": state, "item_params": params}, tmp / "model.pt")
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.old")
            if old.exists():
                shutil.rmtree(old)
            target.rename(old)
        tmp.rename(target)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def load_fit(directory: str | Path, device: str = "cpu") -> FitResult:
    """Read a fit directory written by :func:`save_fit` (``history`` is read too)."""
    d = Path(directory)
    for name in ("config.json", "model.pt", "agents.jsonl", "items.jsonl", "metrics.json"):
        if not (d / name).is_file():
            raise IRTDataError(f"{d}: not a fit directory (missing {name})")
    config = json.loads((d / "config.json").read_text(encoding="utf-8"))
    if config.get("format") != FORMAT_VERSION:
        raise IRTDataError(f"{d / 'config.json'}: unsupported fit format {config.get('format')!r}")
    blob = torch.load(d / "model.pt", map_location=device, weights_only=True)
    model = build_model(config["model"], **config["init_kwargs"])
    model.load_state_dict(blob["state_dict"])
    model.to(device).eval()
    agents = [rec for _, rec in read_jsonl(d / "agents.jsonl")]
    items = [rec for _, rec in read_jsonl(d / "items.jsonl")]
    h = d / "history.jsonl"
    history = [rec for _, rec in read_jsonl(h)] if h.is_file() and h.stat().st_size else []
    return FitResult(
        model=model,
        config=FitConfig.from_dict(config["fit_config"]),
        item_ids=[str(r["id"]) for r in items],
        agent_ids=[str(r["id"]) for r in agents],
        agent_types=[str(r["type"]) for r in agents],
        item_params={k: v.cpu().numpy() for k, v in blob["item_params"].items()},
        metrics=json.loads((d / "metrics.json").read_text(encoding="utf-8")),
        history=history,
        embedder=config.get("embedder") or {},
    )
