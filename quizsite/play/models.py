"""Rooms and players. A room's live state sits in its row so every ASGI process of the room sees it."""

from __future__ import annotations

from django.db import models

from quizsite.agents.models import Agent
from quizsite.items.models import Item


class Room(models.Model):
    class Phase(models.TextChoices):
        IDLE = "idle", "Between tossups"
        READING = "reading", "Reading"
        BUZZED = "buzzed", "Someone holds the buzzer"

    slug = models.SlugField(max_length=64, unique=True)
    settings = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_active = models.DateTimeField(auto_now=True)

    phase = models.CharField(max_length=8, choices=Phase.choices, default=Phase.IDLE)
    item = models.ForeignKey(Item, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    qid = models.CharField(max_length=32, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # The reading clock: words [0, reveal_base) were revealed before reveal_anchor; later words follow
    # the schedule from the anchor. sent_upto is how many words have been broadcast (never more than revealed).
    reveal_base = models.IntegerField(default=0)
    reveal_anchor = models.DateTimeField(null=True, blank=True)
    sent_upto = models.IntegerField(default=0)
    buzz_player = models.ForeignKey("Player", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    buzz_word_index = models.IntegerField(null=True, blank=True)
    buzz_deadline = models.DateTimeField(null=True, blank=True)
    buzz_prompts = models.IntegerField(default=0)
    locked_out = models.JSONField(default=list, blank=True)  # player ids who buzzed this tossup
    read_items = models.JSONField(default=list, blank=True)  # item ids already read in this room
    # Paused for everyone: the reading clock stands still (no anchor) until someone resumes.
    paused = models.BooleanField(default=False)
    # Which process leads the room (its hub's channel): it reveals words and rules, by lease.
    driver = models.CharField(max_length=128, blank=True)
    driver_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Player(models.Model):
    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="players")
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="players")
    name = models.CharField(max_length=40)
    score = models.IntegerField(default=0)
    # Presence is a lease: the processes holding the player's sockets refresh this every few seconds.
    last_seen = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["room", "agent"], name="player_once_per_room")]

    def __str__(self) -> str:
        return f"{self.name} in {self.room_id}"


class ChatMessage(models.Model):
    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="chat")
    player = models.ForeignKey(Player, on_delete=models.CASCADE, related_name="+")
    text = models.CharField(max_length=500)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.player_id}: {self.text[:40]}"


class TossupReading(models.Model):
    """One tossup read to the end in a room: who was there to hear it, and what the room's history shows.

    Written once, in the transaction that ends the tossup. `heard` (the players online at the end) is
    what the per-question statistics divide by; `summary` is the history entry (answer line as safe
    HTML, the buzzes) that a reload or a new leader shows without re-reading the responses."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="readings")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="readings")
    qid = models.CharField(max_length=32)
    heard = models.IntegerField(default=0)
    reason = models.CharField(max_length=16)
    summary = models.JSONField(default=dict, blank=True)
    ended_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["room", "-id"], name="reading_room_recent")]

    def __str__(self) -> str:
        return f"{self.room_id}/{self.qid}"
