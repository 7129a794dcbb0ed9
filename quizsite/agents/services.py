"""Writes for agents."""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils.text import slugify

from . import kinds
from .models import Agent, AgentConfig, AgentVersion

log = logging.getLogger(__name__)


def agent_get_or_create_for_user(*, user: User, name: str = "") -> Agent:
    agent = Agent.objects.filter(user=user).first()
    if agent is None:
        agent = Agent.objects.create(kind=Agent.Kind.HUMAN, user=user, name=name or user.get_username())
    return agent


def agent_get_or_create_guest(*, guest_key: str, name: str) -> Agent:
    """A guest is keyed by a random token kept in their session, so a reload is the same person."""
    try:
        with transaction.atomic():
            agent, _ = Agent.objects.get_or_create(
                guest_key=guest_key, defaults={"kind": Agent.Kind.HUMAN, "name": name}
            )
    except IntegrityError:
        agent = Agent.objects.get(guest_key=guest_key)
    return agent


def agent_get_or_create_guests(*, items: list[tuple[str, str]]) -> list[Agent]:
    """`agent_get_or_create_guest` for a crowd of (guest key, name) arriving together: one read and one
    insert (the play room batches its joins). A key raced in by another process is read back."""
    keys = {key for key, _ in items}
    found = {a.guest_key: a for a in Agent.objects.filter(guest_key__in=keys)}
    new = {key: Agent(kind=Agent.Kind.HUMAN, name=name, guest_key=key) for key, name in items if key not in found}
    if new:
        try:
            with transaction.atomic():
                Agent.objects.bulk_create(new.values())
            found.update(new)
        except IntegrityError:
            found.update({key: agent_get_or_create_guest(guest_key=key, name=a.name) for key, a in new.items()})
    return [found[key] for key, _ in items]


def new_guest_key() -> str:
    return secrets.token_urlsafe(24)


def agent_get_or_create_external(
    *, kind: str, external_id: str, name: str, meta: dict | None = None
) -> Agent:
    """Agents named by an imported file (AI systems, published human ids) are keyed by kind + external id."""
    agent = Agent.objects.filter(kind=kind, external_id=external_id).first()
    if agent is None:
        agent = Agent.objects.create(
            kind=kind, external_id=external_id, name=name or external_id, meta=meta or {}
        )
    return agent


# --- AI agent configs and versions (issue 11) -------------------------------------------------------------


def settings_hash(settings: dict[str, Any]) -> str:
    """The identity of a settings JSON: equal settings (in any key order) are the same version."""
    return hashlib.sha256(json.dumps(settings, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def agent_settings_merged(*, kind: str, settings: dict[str, Any] | None) -> dict[str, Any]:
    """The kind's defaults with `settings` over them, checked; raises ValueError with a readable reason."""
    registry = kinds.load_all()
    if kind not in registry:
        raise ValueError(
            f"unknown agent kind {kind!r}; registered kinds: {', '.join(sorted(registry)) or 'none'}"
        )
    cls = registry[kind]
    if settings is not None and not isinstance(settings, dict):
        raise ValueError("settings must be a JSON object")
    given = dict(settings or {})
    merged = {**cls.defaults, **given}
    cls.check_settings(merged)  # the kind's own reasons first: a chat kind's API key is not "unknown"
    if cls.defaults:
        unknown = sorted(set(given) - set(cls.defaults))
        if unknown:
            raise ValueError(
                f"unknown setting {unknown[0]!r} for kind {kind!r}; known: {', '.join(sorted(cls.defaults))}"
            )
    try:
        json.dumps(merged)
    except (TypeError, ValueError):
        raise ValueError("settings must be plain JSON values") from None
    return merged


def _version_create(config: AgentConfig, merged: dict[str, Any], digest: str) -> AgentVersion:
    number = (config.versions.aggregate(n=Max("number"))["n"] or 0) + 1
    label = f"{config.name}@v{number}"
    agent = Agent.objects.create(
        kind=Agent.Kind.AI,
        name=label,
        external_id=f"agent-version:{label}",
        meta={"config": config.name, "version": number, "kind": config.kind},
        # The agent's sub-type drives the research pages' groups (CAIMIRA Fig 6); a guesser has no group
        # of its own there.
        subtype=config.subtype if config.subtype in Agent.Subtype.values else Agent.Subtype.OTHER,
    )
    return AgentVersion.objects.create(
        config=config, number=number, settings=merged, settings_hash=digest, agent=agent
    )


def agentversion_register(
    *,
    name: str,
    kind: str = "",
    settings: dict[str, Any] | None = None,
    description: str = "",
    subtype: str = "",
    builtin: bool = False,
) -> tuple[AgentVersion, bool]:
    """The version of agent `name` with these settings: the existing one when the settings are unchanged,
    else a new version (with its own Agent row, so older responses keep the settings they were made with).
    A new name needs a kind; an existing name keeps its kind. Returns (version, created)."""
    name = name.strip()
    if not name or slugify(name) != name.lower() or len(name) > 100:
        raise ValueError(f"agent name {name!r}: use letters, digits, '-' and '_' (at most 100)")
    config = AgentConfig.objects.filter(name=name).first()
    if config is not None and kind and kind != config.kind:
        raise ValueError(f"agent {name!r} is of kind {config.kind!r}, not {kind!r}; register a new name")
    kind = config.kind if config is not None else kind
    if not kind:
        raise ValueError(f"agent {name!r} is new: give its kind")
    merged = agent_settings_merged(kind=kind, settings=settings)
    digest = settings_hash(merged)
    if subtype and subtype not in AgentConfig.Subtype.values:
        raise ValueError(f"subtype must be one of {', '.join(AgentConfig.Subtype.values)}")
    for attempt in range(3):  # two registrations at once: the loser finds the winner's row
        try:
            with transaction.atomic():
                if config is None:
                    cls = kinds.REGISTRY[kind]
                    default_subtype = cls.subtype if cls.subtype in AgentConfig.Subtype.values else "other"
                    config = AgentConfig.objects.create(
                        name=name,
                        kind=kind,
                        subtype=subtype or default_subtype,
                        builtin=builtin,
                        description=description
                        or cls.description
                        or " ".join((cls.__doc__ or "").split())[:500],
                    )
                elif description or subtype:
                    AgentConfig.objects.filter(pk=config.pk).update(
                        **({"description": description} if description else {}),
                        **({"subtype": subtype} if subtype else {}),
                    )
                existing = config.versions.filter(settings_hash=digest).first()
                if existing is not None:
                    return existing, False
                return _version_create(config, merged, digest), True
        except IntegrityError:
            if attempt == 2:
                raise
            config = AgentConfig.objects.filter(name=name).first()
    raise AssertionError("unreachable")


def agentconfigs_ensure_builtin() -> list[AgentConfig]:
    """One config per registered kind, named after it, with the kind's defaults (idempotent; called by the
    command and the pages, so a fresh install lists every built-in agent without a data migration that
    would freeze today's defaults)."""
    existing = set(AgentConfig.objects.values_list("name", flat=True))
    for kind in sorted(kinds.load_all()):
        name = slugify(kind)[:100]
        if name and name not in existing:
            try:
                agentversion_register(name=name, kind=kind, builtin=True)
            except ValueError as exc:  # a kind whose defaults need a path the user gives: listed once set
                log.warning("built-in agent %s not created: %s", name, exc)
    return list(AgentConfig.objects.all())
