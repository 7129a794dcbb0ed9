"""CAIMIRA and classic IRT in torch, with its own CLI (``python -m irt``). No Django here.

Typical use::

    import irt
    data = irt.FitData.from_files("queries.jsonl", "agents.jsonl", "responses.jsonl")
    data = irt.with_embeddings(data)                  # default embedder, offline, cached
    result = irt.fit(data, irt.FitConfig(model="caimira", dims=5), progress=None)
    irt.save_fit(result, "fits/run-1")
    p = irt.predict(irt.load_fit("fits/run-1"), [("q9_1", "agent-7")], queries=[{"id": "q9_1", "text": "..."}])

See ``irt/README.md``.

The names that need torch (the models, training, saved fits, predictions) are imported on first
use: every Django process imports this package through the research app, and torch alone took 1.2 s
of each start and a large, long-lived heap in each web process that never fits anything.
"""

import importlib
from typing import TYPE_CHECKING, Any

from .data import FitData, IRTDataError, Responses, load_embeddings, save_embeddings
from .embed import DEFAULT_MODEL, DEFAULT_TEMPLATE, embed_queries, embed_texts, item_text, load_encoder
from .grouping import group_humans_paper
from .interpret import ItemClusters, cluster_items, effective_difficulty, relevance_share
from .prepare import (
    ClueItem,
    HumanGroup,
    backfill,
    buzz_clue,
    buzz_rulings,
    clue_at,
    clue_items,
    clue_word_ends,
    group_agents,
    group_humans,
    group_responses,
    majority_vote,
    split_clues,
    tossup_rulings,
)

_NEEDS_TORCH = {
    "predict": "api", "with_embeddings": "api",
    "load_fit": "io", "save_fit": "io",
    "MIRT": "models", "Caimira": "models", "IRTModel": "models", "OnePL": "models", "TwoPL": "models",
    "EpochStatus": "train", "FitConfig": "train", "FitResult": "train", "ProgressCallback": "train",
    "fit": "train", "hash_split": "train",
}

if TYPE_CHECKING:
    from .api import predict, with_embeddings
    from .io import load_fit, save_fit
    from .models import MIRT, Caimira, IRTModel, OnePL, TwoPL
    from .train import EpochStatus, FitConfig, FitResult, ProgressCallback, fit, hash_split


def __getattr__(name: str) -> Any:
    """PEP 562: a torch-backed name, imported (and kept) on first use."""
    module = _NEEDS_TORCH.get(name)
    if module is None:
        raise AttributeError(f"module 'irt' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_TEMPLATE",
    "MIRT",
    "Caimira",
    "ClueItem",
    "FitConfig",
    "FitData",
    "FitResult",
    "HumanGroup",
    "IRTDataError",
    "IRTModel",
    "ItemClusters",
    "OnePL",
    "ProgressCallback",
    "EpochStatus",
    "Responses",
    "TwoPL",
    "backfill",
    "buzz_clue",
    "buzz_rulings",
    "clue_at",
    "clue_items",
    "clue_word_ends",
    "cluster_items",
    "effective_difficulty",
    "embed_queries",
    "embed_texts",
    "fit",
    "group_agents",
    "group_humans",
    "group_humans_paper",
    "group_responses",
    "hash_split",
    "item_text",
    "load_embeddings",
    "load_encoder",
    "load_fit",
    "majority_vote",
    "predict",
    "relevance_share",
    "save_embeddings",
    "save_fit",
    "split_clues",
    "tossup_rulings",
    "with_embeddings",
]
