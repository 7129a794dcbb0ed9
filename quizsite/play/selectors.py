"""Reads for the lobby, the room's settings panel, its history and the per-question statistics."""

from __future__ import annotations

from typing import Any

from django.db.models import Avg, Count, Q, QuerySet, Sum
from django.utils import timezone

from quizsite.items.models import Item, ItemSet, Response

from .leases import PRESENCE_TTL
from .models import Room, TossupReading


def rooms_active(limit: int = 50) -> QuerySet[Room]:
    since = timezone.now() - PRESENCE_TTL
    return (
        Room.objects.annotate(online=Count("players", filter=Q(players__last_seen__gte=since)))
        .filter(online__gt=0)
        .order_by("-online", "slug")[:limit]
    )


def rooms_recent(limit: int = 10) -> QuerySet[Room]:
    return Room.objects.order_by("-last_active")[:limit]


def tossup_sets() -> QuerySet[ItemSet]:
    return (
        ItemSet.objects.annotate(n_tossups=Count("items", filter=Q(items__kind=Item.Kind.TOSSUP)))
        .filter(n_tossups__gt=0)
        .order_by("slug")
    )


def tossup_categories() -> list[str]:
    return list(
        Item.objects.filter(kind=Item.Kind.TOSSUP)
        .exclude(category="")
        .values_list("category", flat=True)
        .distinct()
        .order_by("category")
    )


def tossup_difficulties() -> dict[str, list[str]]:
    """Item-set slug -> the difficulty labels its tossups carry (sets without any are left out)."""
    out: dict[str, list[str]] = {}
    rows = (
        Item.objects.filter(kind=Item.Kind.TOSSUP)
        .exclude(difficulty="")
        .values_list("item_set__slug", "difficulty")
        .distinct()
        .order_by("item_set__slug", "difficulty")
    )
    for slug, difficulty in rows:
        out.setdefault(slug, []).append(difficulty)
    return out


def item_stats(*, item_id: int) -> dict[str, Any]:
    """How a tossup has gone everywhere it was played live (every room): how many heard it, the
    share who got it (conversion) and got it in power, and the average word of a correct buzz.

    `heard` is the players online when each reading ended (TossupReading), and never fewer than the
    players who answered it live (readings older than that record count only those). A buzz is counted
    once with its final ruling: the rows of an answered prompt are left out."""
    item = Item.objects.only("data").get(pk=item_id)
    power_index = item.data.get("power_index")
    rows = Response.objects.filter(item_id=item_id, source=Response.Source.LIVE).exclude(verdict="prompt")
    accept = Q(verdict="accept")
    agg = rows.aggregate(
        buzzes=Count("id"),
        correct=Count("id", filter=accept),
        avg_correct=Avg("word_index", filter=accept),
        players=Count("agent", distinct=True),
    )
    agg["powers"] = rows.filter(accept, word_index__lte=power_index).count() if power_index is not None else 0
    heard = TossupReading.objects.filter(item_id=item_id).aggregate(n=Sum("heard"))["n"] or 0
    heard = max(heard, agg["players"])
    n_words = len(item.data.get("words", []))

    def share(n: int) -> float | None:
        return round(n / heard, 3) if heard else None

    avg = agg["avg_correct"]
    return {
        "item_id": item_id,
        "heard": heard,
        "buzzes": agg["buzzes"],
        "correct": agg["correct"],
        "powers": agg["powers"],
        "conversion": share(agg["correct"]),
        "power_rate": share(agg["powers"]),
        "avg_buzz_word": round(avg, 1) if avg is not None else None,
        "avg_buzz_fraction": round(avg / n_words, 3) if avg is not None and n_words else None,
        "n_words": n_words,
    }


def room_history(*, room: Room, limit: int) -> list[dict[str, Any]]:
    """The room's last tossups, oldest first, as tossup_end recorded them, with today's statistics."""
    readings = list(TossupReading.objects.filter(room=room).order_by("-id").values("summary", "item_id")[:limit])
    entries = []
    for r in reversed(readings):
        entry = dict(r["summary"])
        if entry.get("item_id"):
            entry["stats"] = item_stats(item_id=entry["item_id"])
        entries.append(entry)
    return entries
