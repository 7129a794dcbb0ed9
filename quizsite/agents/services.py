"""Writes for agents."""

from __future__ import annotations

import secrets

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from .models import Agent


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


def new_guest_key() -> str:
    return secrets.token_urlsafe(24)


def agent_get_or_create_external(*, kind: str, external_id: str, name: str, meta: dict | None = None) -> Agent:
    """Agents named by an imported file (AI systems, published human ids) are keyed by kind + external id."""
    agent = Agent.objects.filter(kind=kind, external_id=external_id).first()
    if agent is None:
        agent = Agent.objects.create(kind=kind, external_id=external_id, name=name or external_id, meta=meta or {})
    return agent
