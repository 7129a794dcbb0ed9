"""The room settings a moderator expects beyond pace and scoring: several categories, a difficulty,
auto-advance with a countdown. Kept apart from services.SETTING_RANGES so that other settings (bots)
can be added there without touching these; `settings_clean` hands these keys to `option_clean`.

Defaults live here too (merged under the room's own settings by messages.room_settings).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from quizsite.items.models import Item

OPTION_DEFAULTS: dict[str, Any] = {
    "categories": [],  # any of these (case-insensitive); empty: the single `category` setting, or any
    "difficulty": "",  # the items' difficulty label, where the set has one
    "auto_next": 0,  # 1: the next tossup starts by itself `auto_next_ms` after a tossup ends
    "auto_next_ms": 5000,
}
OPTION_RANGES: dict[str, tuple[int, int]] = {"auto_next": (0, 1), "auto_next_ms": (1000, 60000)}
OPTION_KEYS = frozenset(OPTION_DEFAULTS)
MAX_CATEGORIES, MAX_LABEL = 20, 100


class BadOption(ValueError):
    """A setting value this room cannot take; the message says why."""


def option_clean(key: str, value: Any) -> Any:
    """One of this module's settings, validated: the clean value, or BadOption."""
    if key in OPTION_RANGES:
        low, high = OPTION_RANGES[key]
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise BadOption(f"{key} must be an integer")
        try:
            number = int(value)
        except (TypeError, ValueError, OverflowError):
            raise BadOption(f"{key} must be an integer") from None
        if not low <= number <= high:
            raise BadOption(f"{key} must be between {low} and {high}")
        return number
    if key == "categories":
        # A list from the room's `settings` message; a comma-separated string from a query string.
        names = [v.strip() for v in value.split(",")] if isinstance(value, str) else value
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise BadOption("categories must be a list of strings")
        names = [n.strip() for n in names if n.strip()]
        if len(names) > MAX_CATEGORIES or any(len(n) > MAX_LABEL for n in names):
            raise BadOption(f"at most {MAX_CATEGORIES} categories of up to {MAX_LABEL} characters")
        return list(dict.fromkeys(names))
    if key == "difficulty":
        if not isinstance(value, str) or len(value) > 50:
            raise BadOption("difficulty must be a short string")
        return value.strip()
    raise BadOption(f"unknown setting {key!r}")


def tossups_filtered(settings: dict[str, Any], items: QuerySet[Item] | None = None) -> QuerySet[Item]:
    """The tossups a room with these settings draws from (set, category or categories, difficulty)."""
    items = Item.objects.filter(kind=Item.Kind.TOSSUP) if items is None else items
    if settings.get("set"):
        items = items.filter(item_set__slug=settings["set"])
    categories = settings.get("categories") or ([settings["category"]] if settings.get("category") else [])
    if categories:
        match = Q()
        for name in categories:
            match |= Q(category__iexact=name)
        items = items.filter(match)
    if settings.get("difficulty"):
        items = items.filter(difficulty__iexact=settings["difficulty"])
    return items


def options_check(settings: dict[str, Any]) -> None:
    """Refuse a combination that matches no tossup, naming the part that does not."""
    if not (settings.get("categories") or settings.get("difficulty")):
        return
    if not tossups_filtered(settings).exists():
        parts = [f"set {settings['set']!r}"] if settings.get("set") else []
        if settings.get("categories"):
            parts.append("categories " + ", ".join(repr(c) for c in settings["categories"]))
        if settings.get("difficulty"):
            parts.append(f"difficulty {settings['difficulty']!r}")
        raise BadOption("no tossups match " + " and ".join(parts))
