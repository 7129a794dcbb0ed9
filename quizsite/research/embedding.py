"""Embedders for fits: the bundled sentence-transformers model, any model path, or a fast word-hashing
embedder that needs no model (quick fits, tests, machines without the model).

Thin adapter over `irt`'s embedding API: `irt` keys its cache by the embedder's name and loads
sentence-transformers models by name or path; the hashing embedder is an `irt.embed.Encoder` made here
and handed to `irt` under the name `hashing-<dim>`, so its vectors are cached like any other.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
from django.conf import settings

import irt

HASHING_PREFIX = "hashing-"
DEFAULT_EMBEDDER = irt.DEFAULT_MODEL
EMBEDDER_CHOICES = [
    (irt.DEFAULT_MODEL, "all-MiniLM-L6-v2 (bundled, offline, 384-d)"),
    ("hashing-256", "word hashing, 256-d (no model; fast, content-aware only through shared words)"),
]
_WORD = re.compile(r"\w+", re.UNICODE)


def cache_dir() -> Path:
    """Where item embeddings are cached (`RESEARCH_EMBEDDING_CACHE`, default var/embeddings)."""
    return Path(getattr(settings, "RESEARCH_EMBEDDING_CACHE", settings.VAR_DIR / "embeddings"))


def hashing_encoder(dim: int):
    """Signed feature hashing of lower-cased words and word pairs, L2-normalised (no model, deterministic)."""
    if dim < 2:
        raise ValueError("hashing dimension must be at least 2")

    def encode(texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            for token in words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]:
                h = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
                out[row, h % dim] += 1.0 if (h >> 63) & 1 else -1.0
            norm = np.linalg.norm(out[row])
            if norm > 0:
                out[row] /= norm
        return out

    return encode


def encoder_for(name: str):
    """The encoder to hand to `irt` for an embedder name; None lets `irt` load a sentence-transformers model."""
    if name.startswith(HASHING_PREFIX):
        try:
            dim = int(name[len(HASHING_PREFIX):])
        except ValueError:
            raise ValueError(f"embedder {name!r}: expected {HASHING_PREFIX}<dimension>") from None
        return hashing_encoder(dim)
    return None
