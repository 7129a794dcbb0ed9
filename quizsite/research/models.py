"""Fit runs and their fitted parameters.

A run keeps everything needed to read it later without refitting: its settings, the counts of the data
it saw, metrics, the per-epoch history, timing, the fitted parameters as rows (agents and items), and an
artifact (the `irt` fit directory plus the prepared CAIMIRA files, zipped) for predictions and cold start.
Parameters are written in the same transaction that marks the run succeeded, so a failed or cancelled run
has none and never becomes the active one.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from quizsite.agents.models import Agent
from quizsite.items.models import Item


class FitRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)

    label = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    reason = models.CharField(max_length=20, default="manual", help_text="manual, command, periodic")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True)
    is_active = models.BooleanField(default=False)
    activate_on_success = models.BooleanField(default=True)
    cancel_requested = models.BooleanField(default=False)
    task_id = models.CharField(max_length=64, blank=True)
    # What the researcher chose: data selection, model, embedder and template (see fits.FitSpec).
    settings = models.JSONField(default=dict)
    # Snapshot of the data the fit saw: items, agents and responses by kind, max response id.
    counts = models.JSONField(default=dict, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    # {"phase", "items", "items_done" (embedding), "epoch", "max_epochs", "train_loss", "val_loss", "best_epoch",
    #  "best_loss", "monitored", "patience", "patience_left", "start", "starts" (fitting; start counts from 1),
    #  "updated"}
    progress = models.JSONField(default=dict, blank=True)
    history = models.JSONField(default=list, blank=True)
    timing = models.JSONField(default=dict, blank=True)  # seconds per phase
    clusters = models.JSONField(default=list, blank=True)  # per cluster: size, mean relevance, mean eff. difficulty
    dim_labels = models.JSONField(default=list, blank=True, help_text="The researcher's names for the dimensions.")
    error = models.TextField(blank=True)
    # Liveness (see services.fitrun_reap_lost): the executing process writes heartbeat_at on every progress
    # step and at least every RESEARCH_FIT_HEARTBEAT_SECONDS; `worker` says which process (host, pid, the
    # Celery node); `attempts` counts the times a worker claimed the run (more than 1 after a retry).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    worker = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    artifact = models.BinaryField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["is_active"], condition=Q(is_active=True), name="one_active_fit")]

    def __str__(self) -> str:
        return f"fit {self.pk} ({self.settings.get('model', '?')}, {self.status})"

    @property
    def dims(self) -> int:
        return int(self.metrics.get("dims") or self.settings.get("dims") or 0)

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def error_line(self) -> str:
        """The first line of the error (the reason; a traceback follows it for a failure inside the fit)."""
        return (self.error or "").split("\n", 1)[0]

    def dim_names(self) -> list[str]:
        labels = list(self.dim_labels or [])
        return [labels[k] if k < len(labels) and labels[k] else f"dim {k + 1}" for k in range(self.dims)]


class FitAgent(models.Model):
    """One agent of a fit: a real agent, or a synthetic group of human players made at fit time."""

    fit = models.ForeignKey(FitRun, on_delete=models.CASCADE, related_name="agents")
    key = models.CharField(max_length=200, help_text="Agent id in the fit (public id, or human_group:<size>:<n>).")
    agent = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=16, choices=Agent.Kind.choices, db_index=True)
    name = models.CharField(max_length=200, help_text="AI systems' names; humans stay pseudonymous.")
    skill = models.JSONField(default=list)
    n_responses = models.IntegerField(default=0)
    accuracy = models.FloatField(null=True, blank=True)
    members = models.JSONField(default=list, blank=True, help_text="Public ids of the players of a group.")

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["fit", "key"], name="fit_agent_key")]

    def __str__(self) -> str:
        return f"{self.key} in fit {self.fit_id}"


class FitItem(models.Model):
    """One IRT item of a fit: a clue prefix of a tossup, an imported clue-prefix item, or a whole item."""

    fit = models.ForeignKey(FitRun, on_delete=models.CASCADE, related_name="items")
    key = models.CharField(max_length=300, help_text="Item id in the fit: <set>/<tossup>_<k> or <set>/<item>.")
    item = models.ForeignKey(Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    clue = models.IntegerField(null=True, blank=True, help_text="k of a clue prefix (1-based).")
    relevance = models.JSONField(default=list)
    difficulty = models.JSONField(default=list)
    effective_difficulty = models.JSONField(default=list)
    effective_total = models.FloatField(default=0.0, db_index=True, help_text="Sum over dimensions of r*d, for sorting.")
    n_responses = models.IntegerField(default=0)
    accuracy = models.FloatField(null=True, blank=True)
    cluster = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["fit", "key"], name="fit_item_key")]
        indexes = [models.Index(fields=["fit", "item"])]

    def __str__(self) -> str:
        return f"{self.key} in fit {self.fit_id}"


class AdaptiveServe(models.Model):
    """An item served to a room because it was the most informative for the players present.

    The recent serves give each item's exposure (so the cap can keep any one item from being overused)
    and tell the play app that the room's current item was chosen adaptively, which its responses record.
    """

    fit = models.ForeignKey(FitRun, null=True, on_delete=models.SET_NULL, related_name="+")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    room = models.CharField(max_length=100, db_index=True)
    information = models.FloatField(help_text="Summed Fisher information of the item's IRT items for the players present.")
    n_agents = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.item_id} to room {self.room}"
