"""`quizbowl` format: JSON lines of tossups (DATA.md)."""

from __future__ import annotations

from pathlib import Path

from django.db import transaction

from quizsite.items.models import Item, Response
from quizsite.items.tossups import tossup_parse

from .base import (
    ImportError_,
    ImportReport,
    answer_field,
    as_text,
    check_unique_ids,
    id_field,
    item_set_get_or_create,
    read_records,
    text_field,
    tossup_field,
)


def tossup_item_fields(question: str) -> dict:
    parsed = tossup_parse(question)
    fields: dict = {"words": parsed.words, "clue_ends": parsed.clue_ends, "power_index": parsed.power_index}
    if parsed.images:
        fields["images"] = list(parsed.images)
    return fields


def import_quizbowl(*, path: Path, set_slug: str, set_name: str = "") -> ImportReport:
    rows = []
    for lineno, obj in read_records(path):
        ext_id = id_field(path, lineno, obj, "id")
        question = tossup_field(path, lineno, obj, "question")
        if len(question.split()) < 2:
            raise ImportError_(str(path), lineno, "question has fewer than two words")
        difficulty = obj.get("difficulty")
        if isinstance(difficulty, int) and not isinstance(difficulty, bool):  # a level such as 3 is fine
            difficulty = str(difficulty)
        fields = {
            "text": question,
            "answer": answer_field(path, lineno, obj, "answer"),
            "category": text_field(path, lineno, obj, "category", required=False),
            "subcategory": text_field(path, lineno, obj, "subcategory", required=False),
            "difficulty": as_text(path, lineno, difficulty, "difficulty", required=False),
            "source": text_field(path, lineno, obj, "source", required=False),
            "summary": text_field(path, lineno, obj, "summary", required=False),  # the answer's summary, embedded
        }
        rows.append((lineno, ext_id, fields))
    check_unique_ids(path, [(lineno, ext_id) for lineno, ext_id, _ in rows])

    report = ImportReport(item_set=set_slug)
    with transaction.atomic():
        item_set = item_set_get_or_create(slug=set_slug, name=set_name, source=str(path.name))
        existing = set(Item.objects.filter(item_set=item_set).values_list("external_id", flat=True))
        new_items = []
        for _lineno, ext_id, fields in rows:
            if ext_id in existing:
                report.existing += 1
                continue
            data = tossup_item_fields(fields["text"])
            for key in ("source", "difficulty", "summary"):
                if fields[key]:
                    data[key] = fields[key]
            new_items.append(
                Item(
                    item_set=item_set,
                    external_id=ext_id,
                    kind=Item.Kind.TOSSUP,
                    text=fields["text"],
                    answer=fields["answer"],
                    category=fields["category"][:100],
                    subcategory=fields["subcategory"][:100],
                    difficulty=fields["difficulty"][:50],
                    data=data,
                )
            )
        Item.objects.bulk_create(new_items, batch_size=500)
        report.created = len(new_items)
        refreshed = tossup_words_refresh(item_set_id=item_set.pk)
        if refreshed:
            report.extra["re-read (words made by an older parser)"] = refreshed
    return report


def tossup_words_refresh(*, item_set_id: int) -> int:
    """Re-derive words, clue ends, power index and images of the set's stored tossups from their text,
    where the parser now reads them differently (image markers were once words). Only tossups nobody
    has answered yet: a stored response's `word_index` counts the words as they were when it was
    given, and re-numbering the words under it would move its buzz."""
    changed = []
    answered = set(Response.objects.filter(item__item_set_id=item_set_id).values_list("item_id", flat=True))
    for item in Item.objects.filter(item_set_id=item_set_id, kind=Item.Kind.TOSSUP).exclude(pk__in=answered):
        fresh = tossup_item_fields(item.text)
        old = {k: item.data.get(k) for k in ("words", "clue_ends", "power_index", "images")}
        if old != {k: fresh.get(k) for k in old}:
            data = {k: v for k, v in item.data.items() if k != "images"}
            item.data = {**data, **fresh}
            changed.append(item)
    Item.objects.bulk_update(changed, ["data"], batch_size=500)
    return len(changed)
