"""How a room with `adaptive` on picks its next tossup: a chooser that another app registers.

Why a hook: the choice needs the active CAIMIRA fit, which lives in the research app, a layer above play
(research reads what play records). Play calls whatever is registered and never imports research; the
research app registers its chooser when it starts (`research/apps.py`). With none registered, a room
with `adaptive` on draws at random, as it does while no fit is active.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Model

from quizsite.agents.models import Agent
from quizsite.items.models import Item


@dataclass(frozen=True)
class Chooser:
    # (room_slug, present, candidate_ids) -> the item and a row to write with the transition, or None
    pick: Callable[..., tuple[Item, Model] | None]
    # (room_slug, settings, item_id) -> what a response in the room records about the choice
    meta: Callable[..., dict[str, Any]]


_chooser: Chooser | None = None


def chooser_register(chooser: Chooser) -> None:
    global _chooser
    _chooser = chooser


def adaptive_pick(*, room_slug: str, present: Sequence[Agent], candidate_ids: Sequence[int]) -> tuple[Item, Model] | None:
    if _chooser is None:
        return None
    return _chooser.pick(room_slug=room_slug, present=present, candidate_ids=candidate_ids)


def adaptive_meta(*, room_slug: str, settings: dict[str, Any], item_id: int | None) -> dict[str, Any]:
    if _chooser is None:
        return {}
    return _chooser.meta(room_slug=room_slug, settings=settings, item_id=item_id)
