"""Player names: what a room shows must be readable text that cannot pass for someone else's."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

MAX_NAME = 40
# Control, format (RTL overrides, zero-width joiners and spaces), separators other than space,
# private-use, surrogate and unassigned code points.
_REFUSED_CATEGORIES = {"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"}


class BadName(ValueError):
    """A name that a room cannot show; the message says why."""


def name_clean(raw: object) -> str:
    """The name as the room shows it: NFC, inner whitespace collapsed, 1..40 visible characters."""
    if not isinstance(raw, str):
        raise BadName("name must be text")
    bad = sorted({f"U+{ord(c):04X}" for c in raw if unicodedata.category(c) in _REFUSED_CATEGORIES and c not in "\t"})
    if bad:
        raise BadName(f"name has invisible or control characters ({', '.join(bad[:3])})")
    name = " ".join(unicodedata.normalize("NFC", raw).split())
    if not 1 <= len(name) <= MAX_NAME:
        raise BadName(f"name must be 1 to {MAX_NAME} characters")
    return name


def name_unique(name: str, taken: Iterable[str]) -> str:
    """`name`, or `name (2)`, `name (3)`... when another player of the room already shows it."""
    folded = {t.casefold() for t in taken}
    if name.casefold() not in folded:
        return name
    n = 2
    while True:
        suffix = f" ({n})"
        candidate = name[: MAX_NAME - len(suffix)] + suffix
        if candidate.casefold() not in folded:
            return candidate
        n += 1
