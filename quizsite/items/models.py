"""Item sets, items of every kind, and the one responses table that every answer lands in."""

from __future__ import annotations

from django.db import models


class ItemSet(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Item(models.Model):
    class Kind(models.TextChoices):
        TOSSUP = "tossup", "Quizbowl tossup"
        CLUE_PREFIX = "clue_prefix", "Quizbowl clue prefix (IRT item)"
        ARCHAEOLOGY = "archaeology", "Question archaeology"
        GHIGLIOTTINA = "ghigliottina", "La Ghigliottina"
        ROMQA = "romqa", "Multi-answer question"

    item_set = models.ForeignKey(ItemSet, on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices, db_index=True)
    text = models.TextField(help_text="Question text (tossup with power mark, passage, clue words...).")
    answer = models.TextField(blank=True, help_text="Answer line or solution.")
    category = models.CharField(max_length=100, blank=True, db_index=True)
    subcategory = models.CharField(max_length=100, blank=True)
    difficulty = models.CharField(max_length=50, blank=True)
    # Kind-specific structure: tossup words/clue ends/power index, choices, candidates, ...
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["item_set", "external_id"], name="item_unique_per_set"),
        ]

    def __str__(self) -> str:
        return f"{self.item_set.slug}/{self.external_id}"


class Response(models.Model):
    """One answer by one agent to one item: a live buzz, an annotation, an AI prediction, an imported line.

    Rows are never rewritten; rulings overruled by a researcher are recorded beside them.
    """

    class Source(models.TextChoices):
        LIVE = "live", "Live play"
        ANNOTATION = "annotation", "Annotation"
        AGENT_RUN = "agent_run", "AI agent run"
        IMPORT = "import", "Imported"

    class Verdict(models.TextChoices):
        ACCEPT = "accept", "Accept"
        PROMPT = "prompt", "Prompt"
        REJECT = "reject", "Reject"
        NONE = "", "Not judged"

    agent = models.ForeignKey("agents.Agent", on_delete=models.PROTECT, related_name="responses")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="responses")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    source = models.CharField(max_length=16, choices=Source.choices, db_index=True)
    given = models.TextField(blank=True)
    choices = models.JSONField(null=True, blank=True, help_text="Options shown, in the order shown.")
    verdict = models.CharField(max_length=8, choices=Verdict.choices, blank=True)
    correct = models.BooleanField(null=True)
    score = models.FloatField(null=True, blank=True)
    points = models.IntegerField(null=True, blank=True)
    # Quizbowl timing: words revealed at the buzz, clue being read (0-based), ms since the tossup began.
    word_index = models.IntegerField(null=True, blank=True)
    clue_index = models.IntegerField(null=True, blank=True)
    n_words = models.IntegerField(null=True, blank=True)
    elapsed_ms = models.IntegerField(null=True, blank=True)
    # Annotation timing: ms spent on the item, measured by the server.
    duration_ms = models.IntegerField(null=True, blank=True)
    room = models.CharField(max_length=100, blank=True, db_index=True)
    judge_version = models.CharField(max_length=20, blank=True)
    meta = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["item", "agent"])]

    def __str__(self) -> str:
        return f"response {self.pk}: {self.agent_id} on {self.item_id} -> {self.verdict or self.correct}"


class RulingReport(models.Model):
    """A player says a ruling was wrong ("I was right"); a researcher reviews it."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        UPHELD = "upheld", "Ruling upheld"
        OVERRULED = "overruled", "Overruled"

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="reports")
    reporter = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="+")
    comment = models.CharField(max_length=500, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["response", "reporter"], name="one_report_per_response")]

    def __str__(self) -> str:
        return f"report on response {self.response_id} ({self.status})"


class ResponseOverride(models.Model):
    """A researcher's new verdict beside the original response, which is never rewritten."""

    response = models.ForeignKey(Response, on_delete=models.CASCADE, related_name="overrides")
    by = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    verdict = models.CharField(max_length=8, choices=Response.Verdict.choices)
    correct = models.BooleanField(null=True)
    note = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"override of response {self.response_id}: {self.verdict}"
