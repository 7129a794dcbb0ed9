"""Helpers for importers that bring responses as well as items (caimira, protobowl-log: `agents/importers/`,
which also has the helpers for the agents those files name).

Responses carry an `import_key` in their meta that names the line they came from, so importing the same
file twice creates nothing new even though a response has no natural key of its own.
"""

from __future__ import annotations

from collections.abc import Iterable

from quizsite.items.models import ItemSet, Response


def existing_import_keys(item_set: ItemSet, prefix: str) -> set[str]:
    """Import keys of the responses already imported into this set by one format."""
    keys = Response.objects.filter(
        item__item_set=item_set, source=Response.Source.IMPORT, meta__import_key__startswith=prefix
    ).values_list("meta__import_key", flat=True)
    return {k for k in keys if k}


def occurrence_keys(prefix: str, pairs: Iterable[str]) -> list[str]:
    """`prefix:pair#n`: the n-th occurrence of a pair in a file, so a file that repeats a pair on purpose
    imports every repetition once, and a second import of the same file none."""
    seen: dict[str, int] = {}
    out = []
    for pair in pairs:
        n = seen.get(pair, 0)
        seen[pair] = n + 1
        out.append(f"{prefix}:{pair}#{n}")
    return out
