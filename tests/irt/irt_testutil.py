"""Helpers for the irt tests (a uniquely named module, so it never shadows another conftest)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


class FakeEncoder:
    """A deterministic tiny 'embedder' (hash-seeded random 8-d vectors) that counts its calls."""

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.seen: list[str] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.seen.extend(texts)
        out = []
        for t in texts:
            rng = np.random.default_rng(int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little"))
            out.append(rng.standard_normal(self.dim))
        return np.asarray(out, dtype=np.float32)
