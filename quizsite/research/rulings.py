"""From one agent's judged answers on one item to its rulings on IRT items (the rules: prepare.py's docstring).

Kept apart from the queries and the grouping so that the one place that decides which answer counts is
small: which answers an agent's kind keeps is prepare's choice, what they mean per clue is here, and the
backfill itself is `irt.tossup_rulings` (pure, no Django).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

import irt
from quizsite.items.models import Item


class Answer(NamedTuple):
    """A judged response: when, its id (the tie-break), the ruling after overrides, the clue being read."""

    at: datetime
    id: int
    correct: bool
    clue_index: int | None  # 0-based; None: the whole text was heard


class Ruling(NamedTuple):
    backfilled: bool  # False: the agent answered at this very IRT item
    at: datetime  # of the answer it comes from
    id: int
    ruling: int  # 0/1

    def rank(self) -> tuple[bool, datetime, int]:
        """Smaller wins: an answer at the item beats a backfilled one, then the earlier answer."""
        return (self.backfilled, self.at, self.id)


def item_rulings(item: Item, item_qs: list[dict[str, Any]], answers: list[Answer]) -> dict[str, Ruling]:
    """One agent's rulings on the IRT items of one source item, from its judged answers, earliest first.

    A tossup's answers go to `irt.tossup_rulings`: answers at one clue are a single buzz (backfilled),
    answers at several clues each give their own q_k. Any other item: its earliest answer. Each ruling
    keeps whether it was backfilled and which answer it came from, for `merge_rulings`.
    """
    if item.kind == Item.Kind.TOSSUP and item_qs[0]["clue"] is not None:
        n = len(item_qs)
        at_clue: dict[int, Answer] = {}
        for a in answers:  # the first answer at each clue
            at_clue.setdefault(n if a.clue_index is None else min(max(a.clue_index + 1, 1), n), a)
        got = irt.tossup_rulings(n, [(k, a.correct) for k, a in at_clue.items()])
        single = next(iter(at_clue.values()))  # backfilled rulings exist only for a single buzz
        out = {}
        for k, r in got.items():
            source = at_clue.get(k, single)
            out[item_qs[k - 1]["id"]] = Ruling(k not in at_clue, source.at, source.id, r)
        return out
    first = answers[0]
    return {item_qs[0]["id"]: Ruling(False, first.at, first.id, int(first.correct))}


def merge_rulings(mine: dict[str, Ruling], got: dict[str, Ruling]) -> None:
    """Add `got` to `mine`. Two source items can give one IRT item (a live tossup and an imported clue prefix
    of it): the better `Ruling.rank` wins, so the outcome never depends on which item came first."""
    for qid, ruling in got.items():
        if qid not in mine or ruling.rank() < mine[qid].rank():
            mine[qid] = ruling
