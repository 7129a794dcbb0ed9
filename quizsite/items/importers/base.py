"""Shared reading and error reporting for importers. The error and the plain file readers live in
`items/textfiles.py` (the readers of auxiliary files use them too) and are re-exported here."""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quizsite.items.models import ItemSet
from quizsite.items.textfiles import ImportError_ as ImportError_
from quizsite.items.textfiles import decode_utf8 as decode_utf8
from quizsite.items.textfiles import read_bytes as read_bytes
from quizsite.items.textfiles import read_text

from .limits import (
    MAX_ANSWER_CHARS,
    MAX_ID_CHARS,
    MAX_JSON_DEPTH,
    MAX_TEXT_CHARS,
    MAX_TOSSUP_CHARS,
    MAX_TOSSUP_WORDS,
)


@dataclass
class ImportReport:
    item_set: str
    created: int = 0
    existing: int = 0
    extra: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # lines printed after the summary (names, figures)
    metrics: dict[str, float] = field(default_factory=dict)  # the same figures for code and tests
    warnings: list[str] = field(default_factory=list)  # what imported but needs a look (printed last)

    def summary(self, warnings: bool = True) -> str:
        """The report as printed; `warnings=False` leaves the warning lines to the caller (the command
        prints them in its warning style)."""
        parts = [f"{self.created} new items", f"{self.existing} already present"]
        parts += [f"{v} {k}" for k, v in self.extra.items()]
        lines = [f"set {self.item_set}: " + ", ".join(parts), *(f"  {n}" for n in self.notes)]
        return "\n".join([*lines, *(self.warning_lines() if warnings else [])])

    def warning_lines(self) -> list[str]:
        return [f"  warning: {w}" for w in self.warnings]


_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")  # NUL and lone surrogates: no database column takes them


def check_value(path: Path, lineno: int, value: Any) -> None:
    """Refuse what parses but cannot be stored faithfully: NaN/Infinity, NUL or lone surrogates in text,
    and nesting deeper than MAX_JSON_DEPTH. Iterative, so no input can exhaust the stack."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, float) and not math.isfinite(current):
            raise ImportError_(str(path), lineno, "NaN or Infinity is not a number here")
        if isinstance(current, str):
            if _BAD_CHARS.search(current):
                raise ImportError_(str(path), lineno, "text contains a NUL character or a lone surrogate")
        elif isinstance(current, dict | list):
            if depth > MAX_JSON_DEPTH:
                raise ImportError_(str(path), lineno, f"nested deeper than {MAX_JSON_DEPTH} levels")
            if isinstance(current, dict):
                stack.extend((k, depth) for k in current)
                stack.extend((v, depth + 1) for v in current.values())
            else:
                stack.extend((v, depth + 1) for v in current)


def _json_loads(path: Path, lineno: int, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportError_(str(path), lineno + exc.lineno - 1, f"invalid JSON: {exc.msg}") from None
    except RecursionError:
        raise ImportError_(str(path), lineno, f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise ImportError_(str(path), lineno, f"invalid JSON: {exc}") from None


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":  # JSON's whitespace, no more
        pos += 1
    return pos


def _array_records(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """The entries of a top-level JSON array with the line each starts on, decoded one at a time."""
    decoder = json.JSONDecoder()
    newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(pos: int) -> int:
        return bisect.bisect_right(newlines, pos - 1) + 1

    pos = _skip_space(text, text.index("[") + 1)
    if text.startswith("]", pos):
        pos += 1
    else:
        while True:
            lineno = line_of(pos)
            try:
                obj, pos = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise ImportError_(str(path), exc.lineno, f"invalid JSON: {exc.msg}") from None
            except RecursionError:
                raise ImportError_(str(path), lineno, f"nested deeper than {MAX_JSON_DEPTH} levels") from None
            except ValueError as exc:
                raise ImportError_(str(path), lineno, f"invalid JSON: {exc}") from None
            yield lineno, obj
            pos = _skip_space(text, pos)
            if text.startswith(",", pos):
                pos = _skip_space(text, pos + 1)
                continue
            if text.startswith("]", pos):
                pos += 1
                break
            raise ImportError_(str(path), line_of(pos), "invalid JSON: expected ',' or ']' in the array")
    if text[pos:].strip():
        raise ImportError_(str(path), line_of(pos), "invalid JSON: extra data after the array")


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) from JSON lines, or from a JSON array (the line each entry starts on).

    Every record has passed check_value; the importers then check each field's type (text_field, ...)."""
    text = read_text(path)
    if not text.strip():
        raise ImportError_(str(path), 0, "file is empty")
    if text.lstrip().startswith("["):
        for lineno, obj in _array_records(path, text):
            if not isinstance(obj, dict):
                raise ImportError_(str(path), lineno, "array entry is not an object")
            check_value(path, lineno, obj)
            yield lineno, obj
        return
    # Split on newlines only: str.splitlines() would also split inside a string holding U+2028 and the like.
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        obj = _json_loads(path, lineno, line)
        if not isinstance(obj, dict):
            raise ImportError_(str(path), lineno, "line is not a JSON object")
        check_value(path, lineno, obj)
        yield lineno, obj


def require(path: Path, lineno: int, obj: dict[str, Any], *names: str) -> None:
    for name in names:
        value = obj.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ImportError_(str(path), lineno, f"missing field {name!r}")


# --- typed fields: a value of the wrong type is refused, never turned into its Python repr --------------


def what(value: Any) -> str:
    """How a JSON value is named in an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def shown(value: Any) -> str:
    """A value as an error message shows it: numbers and short text as written, anything else by kind."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "...")
    return what(value)


def as_text(path: Path, lineno: int, value: Any, label: str, *, required: bool = True,
            max_chars: int = MAX_TEXT_CHARS) -> str:
    """`value` if it is text within `max_chars`; "" for a missing optional one. `label` names it."""
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ImportError_(str(path), lineno, f"missing field {label!r}")
        return ""
    if not isinstance(value, str):
        raise ImportError_(str(path), lineno, f"{label!r} must be text, got {what(value)}")
    if len(value) > max_chars:
        raise ImportError_(str(path), lineno, f"{label!r} is longer than {max_chars:,} characters")
    return value


def text_field(path: Path, lineno: int, obj: dict[str, Any], name: str, *, required: bool = True,
               max_chars: int = MAX_TEXT_CHARS, label: str = "") -> str:
    return as_text(path, lineno, obj.get(name), label or name, required=required, max_chars=max_chars)


def id_field(path: Path, lineno: int, obj: dict[str, Any], name: str, *, required: bool = True,
             label: str = "") -> str:
    """An external id: text or a whole number (ids are often numeric), stripped, at most MAX_ID_CHARS."""
    label = label or name
    value = obj.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    text = as_text(path, lineno, value, label, required=required, max_chars=10 * MAX_ID_CHARS).strip()
    if len(text) > MAX_ID_CHARS:
        raise ImportError_(str(path), lineno, f"{label!r} longer than {MAX_ID_CHARS} characters")
    return text


def int_field(path: Path, lineno: int, obj: dict[str, Any], name: str, *, minimum: int, maximum: int,
              label: str = "") -> int:
    label = label or name
    value = obj.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise ImportError_(str(path), lineno, f"{label!r} must be a whole number {minimum}..{maximum}, got {shown(value)}")
    return value


def number_field(path: Path, lineno: int, obj: dict[str, Any], name: str, *, minimum: float, maximum: float,
                 label: str = "") -> float:
    label = label or name
    value = obj.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float) or not minimum <= value <= maximum:
        raise ImportError_(str(path), lineno, f"{label!r} must be a number {minimum:g}..{maximum:g}, got {shown(value)}")
    return float(value)


def list_field(path: Path, lineno: int, obj: dict[str, Any], name: str, *, required: bool = True,
               label: str = "") -> list[Any]:
    label = label or name
    value = obj.get(name)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise ImportError_(str(path), lineno, f"{label!r} must be a list, got {what(value)}")
    return value


def object_field(path: Path, lineno: int, obj: dict[str, Any], name: str, *, required: bool = True,
                 label: str = "") -> dict[str, Any]:
    label = label or name
    value = obj.get(name)
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise ImportError_(str(path), lineno, f"{label!r} must be an object, got {what(value)}")
    return value


def tossup_field(path: Path, lineno: int, obj: dict[str, Any], name: str, *, label: str = "") -> str:
    """Tossup text within MAX_TOSSUP_CHARS and MAX_TOSSUP_WORDS."""
    text = text_field(path, lineno, obj, name, max_chars=MAX_TOSSUP_CHARS, label=label)
    if len(text.split()) > MAX_TOSSUP_WORDS:
        raise ImportError_(str(path), lineno, f"{(label or name)!r} has more than {MAX_TOSSUP_WORDS:,} words")
    return text


def answer_field(path: Path, lineno: int, obj: dict[str, Any], name: str, *, required: bool = True,
                 label: str = "") -> str:
    """An answer line (or solution), within MAX_ANSWER_CHARS."""
    return text_field(path, lineno, obj, name, required=required, max_chars=MAX_ANSWER_CHARS, label=label)


def check_unique_ids(path: Path, ids: list[tuple[int, str]]) -> None:
    seen: dict[str, int] = {}
    for lineno, ext_id in ids:
        if ext_id in seen:
            raise ImportError_(str(path), lineno, f"duplicate id {ext_id!r} (first on line {seen[ext_id]})")
        seen[ext_id] = lineno


def item_set_get_or_create(*, slug: str, name: str = "", source: str = "") -> ItemSet:
    item_set, _ = ItemSet.objects.get_or_create(
        slug=slug, defaults={"name": (name or slug)[:200], "source": source[:200]}
    )
    return item_set
