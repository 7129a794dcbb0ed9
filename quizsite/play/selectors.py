"""Reads for the lobby."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from quizsite.items.models import Item, ItemSet

from .leases import PRESENCE_TTL
from .models import Room


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
