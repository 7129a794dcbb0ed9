from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template

register = template.Library()


@register.filter
def at(sequence: Any, index: Any) -> Any:
    """sequence[index], or '' when out of range (dimension lists of different lengths)."""
    if isinstance(sequence, dict):
        return sequence.get(index, "")
    try:
        return sequence[int(index)]
    except (IndexError, TypeError, ValueError, KeyError):
        return ""


@register.filter
def num(value: Any, digits: int | str = 2) -> str:
    if value is None or value == "":
        return "–"
    return f"{float(value):.{int(digits)}f}"


@register.filter
def nums(values: Iterable[Any] | None, digits: int | str = 2) -> str:
    return " ".join(f"{float(v):+.{int(digits)}f}" for v in values or [])


@register.filter
def pshade(p: Any) -> str:
    """A background for a probability cell: red (0) to green (1)."""
    if p is None or p == "":
        return ""
    p = max(0.0, min(1.0, float(p)))
    return f"background: hsl({int(120 * p)}, 60%, 88%)"


@register.filter
def bar(value: Any, scale: float | str = 1.0) -> int:
    """Width in percent for an inline bar of a value in [0, scale]."""
    try:
        return max(0, min(100, round(100 * abs(float(value)) / float(scale))))
    except (TypeError, ValueError, ZeroDivisionError):
        return 0


@register.filter
def pval(value: Any) -> str:
    """A p-value as a table shows it: three decimals, or "< 0.001"."""
    if value is None or value == "":
        return "–"
    return "< 0.001" if float(value) < 0.001 else f"{float(value):.3f}"
