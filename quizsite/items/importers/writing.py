"""The write half shared by the annotation-task importers: one transaction, existing ids left alone."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from quizsite.items.models import Item

from .base import ImportReport, item_set_get_or_create


def existing_external_ids(set_slug: str) -> set[str]:
    """Ids already in the set, so an importer can skip expensive work (distractors) for them."""
    return set(Item.objects.filter(item_set__slug=set_slug).values_list("external_id", flat=True))


def items_write(
    *, set_slug: str, set_name: str, source: str, kind: str, rows: list[tuple[str, dict[str, Any]]]
) -> ImportReport:
    """Create the items whose (set, external id) is new; rows are (external id, Item field values)."""
    report = ImportReport(item_set=set_slug)
    with transaction.atomic():
        item_set = item_set_get_or_create(slug=set_slug, name=set_name, source=source)
        existing = set(Item.objects.filter(item_set=item_set).values_list("external_id", flat=True))
        new_items = []
        for ext_id, fields in rows:
            if ext_id in existing:
                report.existing += 1
                continue
            new_items.append(Item(item_set=item_set, external_id=ext_id, kind=kind, **fields))
        Item.objects.bulk_create(new_items, batch_size=500)
        report.created = len(new_items)
    return report

