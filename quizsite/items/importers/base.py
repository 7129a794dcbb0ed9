"""Shared reading and error reporting for importers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from quizsite.items.models import ItemSet


class ImportError_(Exception):
    """A bad input file: `path:line: message`. Line 0 means the file as a whole."""

    def __init__(self, path: str, line: int, message: str):
        self.path, self.line, self.message = path, line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


@dataclass
class ImportReport:
    item_set: str
    created: int = 0
    existing: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        parts = [f"{self.created} new items", f"{self.existing} already present"]
        parts += [f"{v} {k}" for k, v in self.extra.items()]
        return f"set {self.item_set}: " + ", ".join(parts)


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) from JSON lines, or from a JSON array (line numbers are then indices)."""
    if not path.exists():
        raise ImportError_(str(path), 0, "file not found")
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        raise ImportError_(str(path), 0, "file is empty")
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ImportError_(str(path), exc.lineno, f"invalid JSON: {exc.msg}") from None
        for i, obj in enumerate(data, start=1):
            if not isinstance(obj, dict):
                raise ImportError_(str(path), i, "array entry is not an object")
            yield i, obj
        return
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportError_(str(path), lineno, f"invalid JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise ImportError_(str(path), lineno, "line is not a JSON object")
        yield lineno, obj


def require(path: Path, lineno: int, obj: dict[str, Any], *names: str) -> None:
    for name in names:
        value = obj.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ImportError_(str(path), lineno, f"missing field {name!r}")


def check_unique_ids(path: Path, ids: list[tuple[int, str]]) -> None:
    seen: dict[str, int] = {}
    for lineno, ext_id in ids:
        if ext_id in seen:
            raise ImportError_(str(path), lineno, f"duplicate id {ext_id!r} (first on line {seen[ext_id]})")
        seen[ext_id] = lineno


def item_set_get_or_create(*, slug: str, name: str = "", source: str = "") -> ItemSet:
    item_set, _ = ItemSet.objects.get_or_create(slug=slug, defaults={"name": name or slug, "source": source})
    return item_set
