"""`archaeology` format (DATA.md): a text and the question that made its author write it, plus two decoy
questions; CSV with a header or JSON lines."""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from quizsite.items.models import Item

from .base import (
    ImportError_,
    ImportReport,
    check_unique_ids,
    check_value,
    decode_utf8,
    id_field,
    read_bytes,
    read_records,
    text_field,
)
from .writing import items_write

FIELDS = ("text", "true_question", "other_question_1", "other_question_2")


def _csv_records(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        header = reader.fieldnames or []
        missing = [f for f in FIELDS if f not in header]
        if missing:
            raise ImportError_(str(path), 1, f"missing column {missing[0]!r} in the header")
        for row in reader:
            record = {k: v for k, v in row.items() if k is not None}
            check_value(path, reader.line_num, record)
            yield reader.line_num, record
    except csv.Error as exc:
        raise ImportError_(str(path), reader.line_num, f"bad CSV: {exc}") from None


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    data = read_bytes(path)
    head = data[:64].lstrip()
    if path.suffix.lower() == ".csv" or not head.startswith((b"{", b"[")):
        records = list(_csv_records(path, decode_utf8(path, data)))
        if not records:
            raise ImportError_(str(path), 0, "no rows after the header")
        return records
    return list(read_records(path))


def import_archaeology(*, path: Path, set_slug: str, set_name: str = "") -> ImportReport:
    path = Path(path)
    rows = []
    ids = []
    for lineno, obj in _records(path):
        text = text_field(path, lineno, obj, "text").strip()
        true_q, other_1, other_2 = (text_field(path, lineno, obj, f).strip() for f in FIELDS[1:])
        if len({true_q.lower(), other_1.lower(), other_2.lower()}) < 3:
            raise ImportError_(str(path), lineno, "the true question and the two others must all differ")
        ext_id = id_field(path, lineno, obj, "id", required=False)
        if not ext_id:
            ext_id = "a-" + hashlib.sha1(text.encode()).hexdigest()[:12]
        data: dict[str, Any] = {"true_question": true_q, "other_questions": [other_1, other_2]}
        author = text_field(path, lineno, obj, "author", required=False)
        if author:
            data["author"] = author
        ids.append((lineno, ext_id))
        rows.append((ext_id, {"text": text, "answer": true_q, "data": data}))
    check_unique_ids(path, ids)
    return items_write(set_slug=set_slug, set_name=set_name, source=path.name, kind=Item.Kind.ARCHAEOLOGY, rows=rows)
