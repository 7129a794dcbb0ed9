"""`quizbowl` format: JSON lines of tossups (DATA.md)."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from quizsite.items.models import Item
from quizsite.items.tossups import tossup_parse

from .base import ImportError_, ImportReport, check_unique_ids, item_set_get_or_create, read_records, require


def tossup_item_fields(question: str) -> dict:
    parsed = tossup_parse(question)
    return {"words": parsed.words, "clue_ends": parsed.clue_ends, "power_index": parsed.power_index}


def import_quizbowl(*, path: Path, set_slug: str, set_name: str = "") -> ImportReport:
    rows = []
    for lineno, obj in read_records(path):
        require(path, lineno, obj, "id", "question", "answer")
        ext_id = str(obj["id"])
        if len(ext_id) > 200:
            raise ImportError_(str(path), lineno, "id longer than 200 characters")
        question = str(obj["question"])
        if len(question.split()) < 2:
            raise ImportError_(str(path), lineno, "question has fewer than two words")
        rows.append((lineno, ext_id, obj))
    check_unique_ids(path, [(lineno, ext_id) for lineno, ext_id, _ in rows])

    report = ImportReport(item_set=set_slug)
    with transaction.atomic():
        item_set = item_set_get_or_create(slug=set_slug, name=set_name, source=str(path.name))
        existing = set(Item.objects.filter(item_set=item_set).values_list("external_id", flat=True))
        new_items = []
        for _lineno, ext_id, obj in rows:
            if ext_id in existing:
                report.existing += 1
                continue
            data = tossup_item_fields(str(obj["question"]))
            for key in ("source", "difficulty"):
                if obj.get(key) is not None:
                    data[key] = obj[key]
            new_items.append(
                Item(
                    item_set=item_set,
                    external_id=ext_id,
                    kind=Item.Kind.TOSSUP,
                    text=str(obj["question"]),
                    answer=str(obj["answer"]),
                    category=str(obj.get("category") or "")[:100],
                    subcategory=str(obj.get("subcategory") or "")[:100],
                    difficulty=str(obj.get("difficulty") or "")[:50],
                    data=data,
                )
            )
        Item.objects.bulk_create(new_items, batch_size=500)
        report.created = len(new_items)
    return report
