"""Agents: whoever answers an item. Humans (accounts and guests), AI systems, synthetic human groups."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models


def new_pseudonym() -> str:
    return "h-" + secrets.token_hex(6)


class Agent(models.Model):
    class Kind(models.TextChoices):
        HUMAN = "human", "Human"
        AI = "ai", "AI system"
        HUMAN_GROUP = "human_group", "Group of humans"

    class Subtype(models.TextChoices):
        """What sort of system an agent is, for figures by sub-type (CAIMIRA Fig. 6 and 9): blank is unknown."""

        HUMAN = "human", "Human"
        RETRIEVER = "retriever", "Retriever"
        BASE = "base", "Base LLM"
        INSTRUCT = "instruct", "Instruction-tuned LLM"
        API = "api", "API model"
        RAG = "rag", "Retrieval-augmented (RAG)"
        OTHER = "other", "Other"

    kind = models.CharField(max_length=16, choices=Kind.choices, db_index=True)
    subtype = models.CharField(
        max_length=16,
        choices=Subtype.choices,
        blank=True,
        default="",
        help_text="Sub-type for figures by agent group (humans, retrievers, base, instruct, API, RAG).",
    )
    name = models.CharField(max_length=200, help_text="Display name; for humans never exported.")
    # Public, stable id used in every export and API answer, so humans stay pseudonymous.
    public_id = models.CharField(max_length=64, unique=True, default=new_pseudonym)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="agent"
    )
    guest_key = models.CharField(max_length=64, unique=True, null=True, blank=True)
    external_id = models.CharField(max_length=200, blank=True, db_index=True)
    meta = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"
