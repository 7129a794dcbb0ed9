"""`{% load durations %}{{ delta|duration_words }}`: a timedelta as people say it ("15 minutes", "1 hour 30 minutes")."""

from __future__ import annotations

from datetime import timedelta

from django import template

register = template.Library()


def _plural(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'}"


@register.filter(name="duration_words")
def duration_words(delta: timedelta | None) -> str:
    """Days, hours and minutes, largest first; under a minute, seconds. Empty for None."""
    if delta is None:
        return ""
    total = max(0, int(delta.total_seconds()))
    if total < 60:
        return _plural(total, "second")
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [_plural(n, unit) for n, unit in ((days, "day"), (hours, "hour"), (minutes, "minute")) if n]
    return " ".join(parts)
