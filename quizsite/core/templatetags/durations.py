"""`{% load durations %}{{ delta|duration_words }}`: a timedelta as people say it ("15 minutes").

Django's own `timesince` words it (translated, up to two units: "1 hour, 30 minutes"); its template filter
takes a date, not a span, hence this one line of glue.
"""

from __future__ import annotations

from datetime import timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

register = template.Library()


@register.filter(name="duration_words")
def duration_words(delta: timedelta | None) -> str:
    if delta is None:
        return ""
    now = timezone.now()
    return timesince(now - delta, now)
