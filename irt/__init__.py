"""CAIMIRA and classic IRT in torch, with its own CLI (``python -m irt``). No Django here.

Typical use::

    import irt
    data = irt.FitData.from_files("queries.jsonl", "agents.jsonl", "responses.jsonl")
    data = irt.with_embeddings(data)                  # default embedder, offline, cached
    result = irt.fit(data, irt.FitConfig(model="caimira", dims=5), progress=None)
    irt.save_fit(result, "fits/run-1")
    p = irt.predict(irt.load_fit("fits/run-1"), [("q9_1", "agent-7")], queries=[{"id": "q9_1", "text": "..."}])

See ``irt/README.md``.
"""

from .api import predict, with_embeddings
from .data import FitData, IRTDataError, Responses, load_embeddings, save_embeddings
from .embed import DEFAULT_MODEL, DEFAULT_TEMPLATE, embed_queries, embed_texts, item_text, load_encoder
from .grouping import group_humans_paper
from .interpret import ItemClusters, cluster_items, effective_difficulty, relevance_share
from .io import load_fit, save_fit
from .models import MIRT, Caimira, IRTModel, OnePL, TwoPL
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
from .train import EpochStatus, FitConfig, FitResult, ProgressCallback, fit, hash_split

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
