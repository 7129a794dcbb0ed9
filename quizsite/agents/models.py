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


# --- AI agents run inside the app (issue 11) -------------------------------------------------------------
# An AgentConfig names an agent (a kind from quizsite.agents.kinds.REGISTRY plus a description); each
# distinct settings JSON is an AgentVersion with its own `Agent` row, so every response keeps the exact
# settings that produced it. A run answers one item set with one version; AgentAnswer is its run key.


class AgentConfig(models.Model):
    class Subtype(models.TextChoices):
        GUESSER = "guesser", "Guesser trained on questions"
        RETRIEVER = "retriever", "Retriever"
        BASE = "base", "Base language model"
        INSTRUCT = "instruct", "Instruction-tuned model"
        API = "api", "Hosted API"
        RAG = "rag", "Retrieval-augmented model"
        OTHER = "other", "Other"

    name = models.SlugField(max_length=100, unique=True)
    kind = models.CharField(max_length=100, help_text="A key of quizsite.agents.kinds.REGISTRY.")
    subtype = models.CharField(max_length=16, choices=Subtype.choices, default=Subtype.OTHER)
    description = models.TextField(blank=True)
    builtin = models.BooleanField(default=False, help_text="Made by the app for a registered kind.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class AgentVersion(models.Model):
    """One settings JSON of a config (the kind's defaults merged in). Never edited: a change is a new version."""

    config = models.ForeignKey(AgentConfig, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    settings = models.JSONField(default=dict)
    settings_hash = models.CharField(max_length=64)
    agent = models.OneToOneField(Agent, on_delete=models.PROTECT, related_name="agent_version")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["config", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["config", "settings_hash"], name="agentversion_unique_settings"),
            models.UniqueConstraint(fields=["config", "number"], name="agentversion_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.config.name}@v{self.number}"


class AgentRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED = (Status.DONE, Status.FAILED, Status.CANCELLED)

    version = models.ForeignKey(AgentVersion, on_delete=models.CASCADE, related_name="runs")
    item_set = models.ForeignKey("items.ItemSet", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    total = models.IntegerField(default=0, help_text="Questions to answer (items x positions).")
    done = models.IntegerField(default=0, help_text="Questions answered, by this run or an earlier one.")
    written = models.IntegerField(default=0, help_text="Responses this run wrote itself (all its attempts).")
    correct = models.IntegerField(default=0, help_text="Correct answers among `done`.")
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    task_id = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # Liveness, as for fit runs (quizsite/core/liveness.py): heartbeat, which process, how many claims.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    worker = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    phase = models.CharField(max_length=40, blank=True)
    lost = models.CharField(max_length=500, blank=True, help_text="Why the last attempt's worker was lost.")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True, help_text="Time spent answering (all attempts).")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"agent run {self.pk} ({self.version}, {self.item_set_id}, {self.status})"

    @property
    def accuracy(self) -> float | None:
        """Share correct of what was answered, shown as the agent pages show every accuracy (0.9722)."""
        return round(self.correct / self.done, 4) if self.done else None

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def percent(self) -> float:
        return round(100.0 * self.done / self.total, 1) if self.total else 0.0


class AgentAnswer(models.Model):
    """The run key: one row per (agent version, item, position), written in the same transaction as its
    response. The unique constraint is what makes a rerun, a redelivered task or a resumed run write
    nothing twice; `position` is the words revealed for a tossup (0 for items answered whole)."""

    version = models.ForeignKey(AgentVersion, on_delete=models.CASCADE, related_name="answers")
    item = models.ForeignKey("items.Item", on_delete=models.CASCADE, related_name="+")
    position = models.IntegerField(default=0)
    run = models.ForeignKey(AgentRun, null=True, on_delete=models.SET_NULL, related_name="answers")
    response = models.OneToOneField("items.Response", on_delete=models.CASCADE, related_name="agent_answer")
    correct = models.BooleanField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["version", "item", "position"], name="agentanswer_unique_position"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.version_id}/{self.item_id}@{self.position}"
