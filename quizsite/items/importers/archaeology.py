"""`archaeology` format (DATA.md): a text and the question that made its author write it, plus two decoy
questions; CSV with a header or JSON lines."""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from quizsite.items.models import Item

from .base import ImportError_, ImportReport, check_unique_ids, read_records, require
from .writing import check_id, items_write

FIELDS = ("text", "true_question", "other_question_1", "other_question_2")


def _csv_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        missing = [f for f in FIELDS if f not in header]
        if missing:
            raise ImportError_(str(path), 1, f"missing column {missing[0]!r} in the header")
        try:
            for row in reader:
                yield reader.line_num, {k: v for k, v in row.items() if k is not None}
        except csv.Error as exc:
            raise ImportError_(str(path), reader.line_num, f"bad CSV: {exc}") from None


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if not path.exists():
        raise ImportError_(str(path), 0, "file not found")
    with path.open("rb") as fh:
        head = fh.read(64).lstrip()
    if path.suffix.lower() == ".csv" or not head.startswith((b"{", b"[")):
        records = list(_csv_records(path))
        if not records:
            raise ImportError_(str(path), 0, "no rows after the header")
        return records
    return list(read_records(path))


def import_archaeology(*, path: Path, set_slug: str, set_name: str = "") -> ImportReport:
    path = Path(path)
    rows = []
    ids = []
    for lineno, obj in _records(path):
        require(path, lineno, obj, *FIELDS)
        text, true_q, other_1, other_2 = (str(obj[f]).strip() for f in FIELDS)
        if len({true_q.lower(), other_1.lower(), other_2.lower()}) < 3:
            raise ImportError_(str(path), lineno, "the true question and the two others must all differ")
        if obj.get("id") is not None and str(obj["id"]).strip():
            ext_id = check_id(str(path), lineno, str(obj["id"]).strip())
        else:
            ext_id = "a-" + hashlib.sha1(text.encode()).hexdigest()[:12]
        data: dict[str, Any] = {"true_question": true_q, "other_questions": [other_1, other_2]}
        if obj.get("author"):
            data["author"] = str(obj["author"])
        ids.append((lineno, ext_id))
        rows.append((ext_id, {"text": text, "answer": true_q, "data": data}))
    check_unique_ids(path, ids)
    return items_write(set_slug=set_slug, set_name=set_name, source=path.name, kind=Item.Kind.ARCHAEOLOGY, rows=rows)
