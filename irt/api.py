"""High-level helpers that join data, embeddings and a fit (what the CLI and the Django side call)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .data import FitData, IRTDataError, align_embeddings
from .embed import DEFAULT_TEMPLATE, Encoder, embed_queries
from .train import FitResult

__all__ = ["with_embeddings", "predict"]


def with_embeddings(
    data: FitData,
    model: str | None = None,
    template: str | None = DEFAULT_TEMPLATE,
    encoder: Encoder | None = None,
    cache: str | Path | bool | None = True,
    device: str = "cpu",
    where: Sequence[str] | None = None,
    progress: Callable[[int, int], Any] | None = None,
) -> FitData:
    """A copy of ``data`` with every item embedded (cached) and the embedder recorded for cold start.

    ``where`` (one ``"path:line"`` per item) is used in template errors; ``progress(done, total)``
    counts items embedded or found in the cache (see :func:`irt.embed.embed_texts`).
    """
    ids, emb, meta = embed_queries(
        data.items, model=model, template=template, encoder=encoder, cache=cache, device=device, where=where,
        progress=progress,
    )
    return replace(data, embeddings=align_embeddings(data.items, (ids, emb)), embedder=meta)


def predict(
    result: FitResult,
    pairs: Sequence[tuple[str, str]],
    queries: Sequence[dict[str, Any]] = (),
    embeddings: tuple[Sequence[str], np.ndarray] | dict[str, Sequence[float]] | None = None,
    encoder: Encoder | None = None,
    cache: str | Path | bool | None = True,
    device: str = "cpu",
) -> np.ndarray:
    """p(correct) for ``(query_id, agent_id)`` pairs.

    Queries of the fitted bank use their fitted parameters. For CAIMIRA, a query outside the bank
    (cold start) is scored from its embedding: taken from ``embeddings`` when given there, else its
    record in ``queries`` is embedded with the fit's embedder and template (cached). The id-only
    models score such a query as the bank's mean item.
    """
    known = set(result.item_ids)
    new_ids = sorted({q for q, _ in pairs if q not in known})
    new_emb: dict[str, np.ndarray] = {}
    if new_ids and result.model.uses_embeddings:
        given: dict[str, np.ndarray] = {}
        if embeddings is not None:
            if isinstance(embeddings, dict):
                given = {k: np.asarray(v, dtype=np.float32) for k, v in embeddings.items()}
            else:
                given = dict(zip(embeddings[0], np.asarray(embeddings[1], dtype=np.float32), strict=True))
        by_id = {str(q["id"]): q for q in queries}
        to_embed = [q for q in new_ids if q not in given]
        missing = [q for q in to_embed if q not in by_id]
        if missing:
            raise IRTDataError(f"query {missing[0]!r} is neither in the fit nor in the queries given")
        if to_embed:
            if not result.embedder.get("model"):
                raise IRTDataError(
                    "this fit does not record its embedder (its embeddings came from a file without it); "
                    "pass embeddings for the new queries"
                )
            ids, emb, _ = embed_queries(
                [by_id[q] for q in to_embed],
                model=result.embedder["model"],
                template=result.embedder.get("template", DEFAULT_TEMPLATE),
                encoder=encoder,
                cache=cache,
                device=device,
            )
            given.update(zip(ids, emb, strict=True))
        new_emb = {q: given[q] for q in new_ids}
    q_ids = [q for q, _ in pairs]
    a_ids = [a for _, a in pairs]
    return result.predict_proba(q_ids, a_ids, new_emb)
