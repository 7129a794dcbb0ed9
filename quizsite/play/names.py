"""Player names: what a room shows must be readable text that cannot pass for someone else's."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Container, Iterable

MAX_NAME = 40
MAX_MARKS = 3  # combining marks on one character (Vietnamese needs two; a stack of thirty covers the line)
# Letters and symbols that show as nothing (Hangul fillers, the blank braille pattern): a name of only
# these is as invisible as an empty one.
_BLANK = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800"}
_SUFFIX = re.compile(r" \(\d+\)$")
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
    if all(c == " " or c in _BLANK for c in name):
        raise BadName("name must have a visible character")
    marks = 0
    for c in name:
        marks = marks + 1 if unicodedata.combining(c) else 0
        if marks > MAX_MARKS:
            raise BadName(f"name stacks more than {MAX_MARKS} accents on one character")
    return name


def name_key(name: str) -> str:
    """What two names must differ in to tell players apart: not case, not full-width or other
    compatibility forms ("ａｎｎ" shows as "ann")."""
    return unicodedata.normalize("NFKC", name).casefold()


def name_unique(name: str, taken: Iterable[str]) -> str:
    """`name`, or `name (2)`, `name (3)`... when another player of the room already shows it."""
    return name_unique_among(name, {name_key(t) for t in taken})


def name_unique_among(name: str, taken_keys: Container[str]) -> str:
    """`name_unique` against the `name_key`s of the names taken (a crowd joining one room checks each
    name against a set kept up to date, not against every name again). A name that already ends in a
    number is numbered on: "ann (2)" taken gives "ann (3)", not "ann (2) (2)"."""
    if name_key(name) not in taken_keys:
        return name
    base = _SUFFIX.sub("", name) or name
    n = 2
    while True:
        suffix = f" ({n})"
        candidate = base[: MAX_NAME - len(suffix)] + suffix
        if name_key(candidate) not in taken_keys:
            return candidate
        n += 1
