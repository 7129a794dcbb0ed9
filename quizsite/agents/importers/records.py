"""Agents named by imported files (caimira, protobowl-log, AI predictions): found or created in bulk by kind +
external id, and given the sub-type their file names. The responses' import keys stay with the responses
(`items/importers/records.py`)."""

from __future__ import annotations

from typing import Any

from quizsite.agents.models import Agent
from quizsite.items.importers.base import ImportError_, shown


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
        raise ImportError_(str(path), lineno, f"subtype must be one of {', '.join(Agent.Subtype.values)}, got {shown(value)}")
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
