"""Helpers for importers that bring agents and responses as well as items (caimira, protobowl-log).

Responses carry an `import_key` in their meta that names the line they came from, so importing the same
file twice creates nothing new even though a response has no natural key of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from quizsite.agents.models import Agent
from quizsite.items.models import ItemSet, Response

from .base import ImportError_


def agents_get_or_create(*, kind: str, names: dict[str, str], meta: dict | None = None) -> tuple[dict[str, Agent], int]:
    """Agents keyed by kind + external id, created in bulk; returns ({external_id: agent}, number created).

    One query for the existing ones and one bulk insert, so a log with thousands of players stays fast.
    """
    found = {a.external_id: a for a in Agent.objects.filter(kind=kind, external_id__in=list(names))}
    missing = [
        Agent(kind=kind, external_id=ext_id, name=(name or ext_id)[:200], meta=dict(meta or {}))
        for ext_id, name in names.items()
        if ext_id not in found
    ]
    Agent.objects.bulk_create(missing, batch_size=500)
    if missing:  # SQLite and PostgreSQL return pks from bulk_create, but re-read to be backend-neutral
        found.update(
            {a.external_id: a for a in Agent.objects.filter(kind=kind, external_id__in=[a.external_id for a in missing])}
        )
    return found, len(missing)


def subtype_field(path: object, lineno: int, obj: dict[str, Any]) -> str:
    """An optional `subtype` of an agent line (Agent.Subtype: human, retriever, base, instruct, api, rag, other)."""
    value = obj.get("subtype")
    if value in (None, ""):
        return ""
    if not isinstance(value, str) or value not in Agent.Subtype.values:
        raise ImportError_(str(path), lineno, f"subtype must be one of {', '.join(Agent.Subtype.values)}, got {str(value)[:40]!r}")
    return value


def agents_subtype_set(*, agents: dict[str, Agent], subtypes: dict[str, str]) -> int:
    """Give agents the sub-type their file names (a blank one leaves the agent as it is); returns how many changed."""
    changed = []
    for key, agent in agents.items():
        if subtypes.get(key) and agent.subtype != subtypes[key]:
            agent.subtype = subtypes[key]
            changed.append(agent)
    Agent.objects.bulk_update(changed, ["subtype"], batch_size=500)
    return len(changed)


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
