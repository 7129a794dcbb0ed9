"""Reads for the profile page and the player's own data download.

Figures count final rulings of live tossup buzzes (a prompt is not yet a ruling):

* accuracy per category: correct buzzes / buzzes;
* celerity: the mean fraction of the tossup still unread at a correct buzz, 1 - word_index / n_words
  (1.0: buzzed before the first word; 0.0: after the last);
* power rate: correct buzzes at or before the power mark / buzzes (a tossup without a mark has no power);
* neg rate: wrong buzzes before the end of the tossup (an interrupt) / buzzes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from quizsite.agents.models import Agent
from quizsite.core.streaming import closing_iter
from quizsite.items.models import Item, Response

DOWNLOAD_FIELDS = (
    "response_id",
    "created_at",
    "item_set",
    "item_id",
    "item_kind",
    "category",
    "source",
    "given",
    "verdict",
    "correct",
    "score",
    "points",
    "word_index",
    "clue_index",
    "n_words",
    "elapsed_ms",
    "duration_ms",
    "room",
)


@dataclass(frozen=True)
class CategoryFigures:
    category: str
    buzzes: int
    correct: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.buzzes if self.buzzes else None


@dataclass(frozen=True)
class ProfileFigures:
    buzzes: int
    correct: int
    celerity: float | None
    power_rate: float | None
    neg_rate: float | None
    categories: list[CategoryFigures]
    annotations: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.buzzes if self.buzzes else None


@dataclass(frozen=True)
class RecentTossup:
    response: Response
    item: Item
    words: list[str]
    buzz_at: int  # words revealed at the buzz
    power_index: int | None

    @property
    def heard(self) -> str:
        return " ".join(self.words[: self.buzz_at])

    @property
    def unheard(self) -> str:
        return " ".join(self.words[self.buzz_at :])

    @property
    def fraction_left(self) -> float | None:
        return 1 - self.buzz_at / len(self.words) if self.words else None


def _buzzes(agent: Agent) -> QuerySet[Response]:
    return Response.objects.filter(
        agent=agent, source=Response.Source.LIVE, item__kind=Item.Kind.TOSSUP, correct__isnull=False
    )


def _is_power(correct: bool, word_index: int | None, data: dict) -> bool:
    power_index = data.get("power_index")
    return bool(correct and power_index is not None and word_index is not None and word_index <= power_index)


def profile_figures(agent: Agent) -> ProfileFigures:
    rows = list(
        _buzzes(agent).values_list("correct", "word_index", "n_words", "item__category", "item__data")
    )
    by_category: dict[str, list[bool]] = defaultdict(list)
    celerities: list[float] = []
    powers = negs = 0
    for correct, word_index, n_words, category, data in rows:
        by_category[category or "(none)"].append(bool(correct))
        n = n_words or len((data or {}).get("words", []))
        if correct and n and word_index is not None:
            celerities.append(1 - min(word_index, n) / n)
        powers += _is_power(bool(correct), word_index, data or {})
        negs += bool(not correct and word_index is not None and n and word_index < n)
    n_buzzes = len(rows)
    return ProfileFigures(
        buzzes=n_buzzes,
        correct=sum(1 for r in rows if r[0]),
        celerity=sum(celerities) / len(celerities) if celerities else None,
        power_rate=powers / n_buzzes if n_buzzes else None,
        neg_rate=negs / n_buzzes if n_buzzes else None,
        categories=[CategoryFigures(c, len(v), sum(v)) for c, v in sorted(by_category.items())],
        annotations=Response.objects.filter(agent=agent, source=Response.Source.ANNOTATION).count(),
    )


def recent_tossups(agent: Agent, *, limit: int = 10) -> list[RecentTossup]:
    rows = _buzzes(agent).select_related("item", "item__item_set").order_by("-created_at", "-id")[:limit]
    out = []
    for response in rows:
        data = response.item.data or {}
        words = list(data.get("words") or response.item.text.split())
        out.append(
            RecentTossup(
                response=response,
                item=response.item,
                words=words,
                buzz_at=min(response.word_index or 0, len(words)),
                power_index=data.get("power_index"),
            )
        )
    return out


def own_responses(agent: Agent) -> Iterator[dict[str, Any]]:
    """Every response of the agent, in DOWNLOAD_FIELDS, oldest first (the player's own data, so `given`
    is the exact text they typed)."""
    rows = (
        Response.objects.filter(agent=agent)
        .select_related("item", "item__item_set")
        .order_by("id")
        .iterator(chunk_size=2000)
    )
    with closing_iter(rows) as source:  # a download cut short closes its cursor at once, on its own thread
        for r in source:
            yield {
                "response_id": r.pk,
                "created_at": r.created_at.isoformat(),
                "item_set": r.item.item_set.slug,
                "item_id": r.item.external_id,
                "item_kind": r.item.kind,
                "category": r.item.category,
                "source": r.source,
                "given": r.given,
                "verdict": r.verdict,
                "correct": r.correct,
                "score": r.score,
                "points": r.points,
                "word_index": r.word_index,
                "clue_index": r.clue_index,
                "n_words": r.n_words,
                "elapsed_ms": r.elapsed_ms,
                "duration_ms": r.duration_ms,
                "room": r.room,
            }


def agent_of(user: Any) -> Agent | None:
    return Agent.objects.filter(user=user).first() if user is not None and user.is_authenticated else None
