"""Annotation campaigns: who annotates what, under which lease, and what they wrote.

Answers themselves are rows of the one responses table (items.Response, source "annotation"); an
Assignment points at its response, so campaign statistics never need a second copy of an answer.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from quizsite.agents.models import Agent
from quizsite.items.models import Item, ItemSet, Response


class Campaign(models.Model):
    class Task(models.TextChoices):
        ARCHAEOLOGY_CHOOSE = "archaeology-choose", "Question archaeology: choose the question"
        ARCHAEOLOGY_WRITE = "archaeology-write", "Question archaeology: write the question"
        ARCHAEOLOGY_AUTHOR = "archaeology-author", "Question archaeology: author a new item"
        GHIGLIOTTINA_CHOOSE = "ghigliottina-choose", "La Ghigliottina: choose the link (4 choices)"
        GHIGLIOTTINA_OPEN = "ghigliottina-open", "La Ghigliottina: type the link (timed)"
        ROMQA_SELECT = "romqa-select", "Multi-answer question: tick every answer"

    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    item_set = models.ForeignKey(
        ItemSet, on_delete=models.PROTECT, related_name="campaigns",
        help_text="Items to annotate; for archaeology-author, the set approved items are added to.",
    )
    task = models.CharField(max_length=24, choices=Task.choices)
    per_item = models.PositiveSmallIntegerField(default=3, help_text="Annotators per item (k).")
    quota = models.PositiveIntegerField(
        default=0, help_text="Items per annotator (0: as many as are available). Authoring: entries to write."
    )
    instructions = models.TextField(blank=True)
    consent_text = models.TextField(blank=True)
    completion_code = models.CharField(max_length=64, blank=True, help_text="Shown on the end page (crowd platforms).")
    completion_url = models.URLField(blank=True, help_text="Where the end page sends crowd workers, if anywhere.")
    min_answers = models.PositiveIntegerField(
        default=1,
        help_text="Real answers (items answered, not skipped; training and attention checks not counted; authoring: "
        "entries written) needed before the end page shows the completion code. campaign_create defaults it to the quota.",
    )
    lease_seconds = models.PositiveIntegerField(default=600, help_text="How long an item stays reserved.")
    timer_seconds = models.PositiveIntegerField(default=60, help_text="ghigliottina-open: time per game.")
    similarity_threshold = models.FloatField(default=0.8, help_text="archaeology-write: correct at or above.")
    training_items = models.ManyToManyField(
        Item, blank=True, related_name="+",
        help_text="Practice items: shown first, with feedback; their answers are marked practice and count nowhere.",
    )
    practice_count = models.PositiveSmallIntegerField(
        default=0,
        help_text="How many practice items were drawn from the item set at creation (besides any named by id); "
        "fixed for the campaign, never among the real items.",
    )
    gold_items = models.ManyToManyField(Item, blank=True, related_name="+", help_text="Attention checks, shown to all.")
    gold_every = models.PositiveSmallIntegerField(default=5, help_text="A gold item after this many pool items.")
    is_open = models.BooleanField(default=True)
    invite_only = models.BooleanField(
        default=False, help_text="Only the invited accounts (and researchers) may take part; guests and crowd links are refused."
    )
    invited = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="campaign_invitations", help_text="Accounts invited to an invite-only campaign."
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "slug"]

    def __str__(self) -> str:
        return self.slug


class CrowdIdentity(models.Model):
    """A crowd worker id (`prolific:<PROLIFIC_PID>`, `mturk:<workerId>`) and the one browser that may use it.

    The id in a crowd platform's link is no secret (it is in the URL, the platform's messages, screenshots),
    so it names an annotator only in the first browser session that presents it, in every campaign; any other
    browser presenting it is refused. The session holds a random token; only its hash is stored here.
    Deleting the row (in the admin) releases the id, e.g. for a worker who cleared their cookies.
    """

    external_id = models.CharField(max_length=200, unique=True)
    browser_hash = models.CharField(max_length=64, help_text="SHA-256 of the token in the owning browser's session.")
    claimed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "crowd identities"

    def __str__(self) -> str:
        return self.external_id


class Participant(models.Model):
    """One annotator in one campaign: consent, crowd ids, and when they finished."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="participants")
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="annotation_participations")
    external_id = models.CharField(max_length=200, blank=True, help_text="Crowd id (PROLIFIC_PID), if any.")
    meta = models.JSONField(default=dict, blank=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["campaign", "agent"], name="participant_once_per_campaign")]

    def __str__(self) -> str:
        return f"{self.campaign.slug}/{self.agent.public_id}"


class Assignment(models.Model):
    """An item handed to one annotator. Leased until `expires_at`; then back to the pool unless done."""

    class Role(models.TextChoices):
        TRAINING = "training", "Training (with feedback)"
        POOL = "pool", "Pool item"
        GOLD = "gold", "Gold (attention check)"

    class State(models.TextChoices):
        LEASED = "leased", "Leased"
        DONE = "done", "Answered"
        SKIPPED = "skipped", "Skipped or flagged"
        EXPIRED = "expired", "Lease expired"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="+")
    role = models.CharField(max_length=8, choices=Role.choices, default=Role.POOL)
    group = models.CharField(max_length=220, help_text="Unit of assignment: the item, or a romqa cluster.")
    position = models.PositiveIntegerField(help_text="Order within the annotator's session.")
    state = models.CharField(max_length=8, choices=State.choices, default=State.LEASED)
    choices = models.JSONField(null=True, blank=True, help_text="Options in the order this annotator sees them.")
    leased_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    served_at = models.DateTimeField(null=True, blank=True, help_text="First shown; duration counts from here.")
    done_at = models.DateTimeField(null=True, blank=True)
    response = models.OneToOneField(
        Response, null=True, blank=True, on_delete=models.PROTECT, related_name="annotation_assignment"
    )
    note = models.CharField(max_length=500, blank=True, help_text="Why it was skipped or flagged.")

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            # never twice to the same annotator, whatever happened the first time
            models.UniqueConstraint(fields=["participant", "item"], name="assignment_item_once_per_annotator"),
        ]
        indexes = [models.Index(fields=["campaign", "state"]), models.Index(fields=["campaign", "group"])]

    def __str__(self) -> str:
        return f"{self.campaign.slug}: {self.item_id} -> {self.participant_id} ({self.state})"


class AuthoredItem(models.Model):
    """archaeology-author: a participant's own question, the text that answers it, and two wrong questions.

    It becomes an Item of the campaign's set only when a researcher approves it.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting for review"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="authored")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="authored")
    question = models.TextField(help_text="The participant's research question.")
    text = models.TextField(help_text="The text they wrote to answer it.")
    other_question_1 = models.TextField()
    other_question_2 = models.TextField()
    duration_ms = models.IntegerField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING, db_index=True)
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_note = models.CharField(max_length=500, blank=True)
    item = models.OneToOneField(Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="authored_from")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.campaign.slug}: {self.question[:60]}"
