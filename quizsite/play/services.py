"""Room transitions: join, next, buzz, answer, the clock's tick, chat and settings.

Each public function runs in one transaction with the room row locked, so the first buzz that reaches
the database wins in every process, and returns an Outcome: events for the whole room (sent by the
caller only after the commit) and replies for the caller alone. Time is passed in (`now`) so tests and
the clock agree on one server time.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from django.db import transaction
from django.db.models import F

from quizsite.agents.models import Agent
from quizsite.items.models import Item, Response
from quizsite.items.tossups import TossupText, sentence_end_flags
from quizsite.judge import JUDGE_VERSION, Ruling, judge
from quizsite.research.adaptive import adaptive_meta, adaptive_pick_for_room

from . import clock
from .messages import (
    Event,
    current_item,
    hello_state,
    ms_between,
    room_settings,
    scores_event,
    tossup_end_event,
    tossup_event,
    words_event,
)
from .models import ChatMessage, Player, Room

MAX_PROMPTS = 2
# An answer sent just before the deadline may arrive a little after it; the clock rules the timeout only
# once this grace has passed too, and an answer that arrives within it is judged.
LATE_ANSWER_GRACE = timedelta(milliseconds=750)
LEASE = timedelta(seconds=5)
SETTING_RANGES: dict[str, tuple[int, int]] = {
    "ms_per_word": (20, 2000),
    "answer_ms": (1000, 60000),
    "dead_ms": (0, 60000),
    "power_points": (0, 100),
    "points": (0, 100),
    "neg_points": (-100, 0),
    "adaptive": (0, 1),  # research app: pick the most informative tossup for the players present (needs an active fit)
}
TEXT_SETTINGS = ("set", "category")


class PlayError(Exception):
    """A refused request; the consumer answers it with an `error` message and keeps the socket open."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message

    def as_event(self) -> Event:
        return {"type": "error", "code": self.code, "message": self.message}


@dataclass
class Outcome:
    events: list[Event] = field(default_factory=list)
    reply: list[Event] = field(default_factory=list)


@dataclass
class TickResult:
    events: list[Event]
    wake_in: float  # seconds until the clock needs to look again
    leader: bool


def settings_clean(raw: dict[str, Any]) -> dict[str, Any]:
    """Validate room settings from a query string or a `settings` message; unknown keys are refused."""
    clean: dict[str, Any] = {}
    for key, value in raw.items():
        if key in SETTING_RANGES:
            low, high = SETTING_RANGES[key]
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise PlayError("bad_settings", f"{key} must be an integer")
            try:
                number = int(value)
            except (TypeError, ValueError, OverflowError):
                raise PlayError("bad_settings", f"{key} must be an integer") from None
            if not low <= number <= high:
                raise PlayError("bad_settings", f"{key} must be between {low} and {high}")
            clean[key] = number
        elif key in TEXT_SETTINGS:
            if not isinstance(value, str) or len(value) > 100:
                raise PlayError("bad_settings", f"{key} must be a short string")
            clean[key] = value
        else:
            raise PlayError("bad_settings", f"unknown setting {key!r}")
    if clean.get("set") and not Item.objects.filter(item_set__slug=clean["set"], kind=Item.Kind.TOSSUP).exists():
        raise PlayError("bad_settings", f"no tossups in item set {clean['set']!r}")
    return clean


# --- reading clock helpers -------------------------------------------------------------------------


@lru_cache(maxsize=512)
def _schedule(item_id: int, ms_per_word: int, words: tuple[str, ...]) -> list[int]:
    return clock.schedule(sentence_end_flags(list(words)), ms_per_word)


def _cum(room: Room) -> list[int]:
    item = current_item(room)
    return _schedule(item.pk, room_settings(room)["ms_per_word"], tuple(item.data["words"]))


def _tossup(room: Room) -> TossupText:
    data = current_item(room).data
    return TossupText(words=data["words"], clue_ends=data["clue_ends"], power_index=data.get("power_index"))


def _locked(slug: str) -> Room:
    return Room.objects.select_for_update(of=("self",)).select_related("item", "item__item_set").get(slug=slug)


def _player(room: Room, player_id: int) -> Player:
    try:
        return Player.objects.select_related("agent").get(pk=player_id, room=room)
    except Player.DoesNotExist:
        raise PlayError("not_joined", "join the room first") from None


def _advance(room: Room, now: datetime) -> list[Event]:
    """Reveal the words due by `now` and end the tossup after the dead time."""
    if room.phase != Room.Phase.READING:
        return []
    events: list[Event] = []
    cum = _cum(room)
    elapsed = ms_between(now, room.reveal_anchor)
    revealed = clock.revealed_count(cum, room.reveal_base, elapsed)
    if revealed > room.sent_upto:
        events.append(words_event(room, room.sent_upto, revealed))
        room.sent_upto = revealed
    if revealed >= len(cum):
        last_shown = clock.reveal_offset(cum, room.reveal_base, len(cum) - 1)
        if elapsed >= last_shown + room_settings(room)["dead_ms"]:
            events += _end(room, "timeout")
    return events


def _wake_in(room: Room, now: datetime) -> float:
    if room.phase == Room.Phase.BUZZED and room.buzz_deadline:
        return (room.buzz_deadline + LATE_ANSWER_GRACE - now).total_seconds()
    if room.phase == Room.Phase.READING:
        cum = _cum(room)
        elapsed = ms_between(now, room.reveal_anchor)
        if room.sent_upto < len(cum):
            due = clock.reveal_offset(cum, room.reveal_base, room.sent_upto)
        else:
            due = clock.reveal_offset(cum, room.reveal_base, len(cum) - 1) + room_settings(room)["dead_ms"]
        return (due - elapsed) / 1000
    return 1.0


def _end(room: Room, reason: str) -> list[Event]:
    event = tossup_end_event(room, reason)
    room.phase = Room.Phase.IDLE
    room.buzz_player = None
    room.buzz_deadline = None
    room.buzz_word_index = None
    if room.item_id not in room.read_items:
        room.read_items = [*room.read_items, room.item_id][-5000:]
    return [event]


def _pick_item(room: Room) -> Item:
    settings = room_settings(room)
    items = Item.objects.filter(kind=Item.Kind.TOSSUP)
    if settings.get("set"):
        items = items.filter(item_set__slug=settings["set"])
    if settings.get("category"):
        items = items.filter(category__iexact=settings["category"])
    ids = list(items.values_list("id", flat=True))
    if not ids:
        raise PlayError("no_items", "no tossups match this room's set and category")
    unread = sorted(set(ids) - set(room.read_items))
    if not unread:  # every tossup read: start over
        room.read_items = []
        unread = ids
    if settings.get("adaptive"):
        picked = adaptive_pick_for_room(room=room, candidate_ids=unread)
        if picked is not None:
            return picked
    return Item.objects.select_related("item_set").get(pk=random.choice(unread))


# --- judging and recording -------------------------------------------------------------------------


def _record(room: Room, player: Player, text: str, ruling: Ruling, points: int, now: datetime, **meta: Any) -> None:
    tossup = _tossup(room)
    word_index = room.buzz_word_index or 0
    correct = {"accept": True, "reject": False}.get(ruling.verdict)
    Response.objects.create(
        agent=player.agent,
        item=current_item(room),
        source=Response.Source.LIVE,
        given=text,
        verdict=ruling.verdict,
        correct=correct,
        score=ruling.score,
        points=points,
        word_index=word_index,
        clue_index=tossup.clue_of(word_index),
        n_words=tossup.n_words,
        elapsed_ms=ms_between(now, room.started_at),
        room=room.slug,
        judge_version=JUDGE_VERSION,
        meta={"qid": room.qid, "matched": ruling.matched, "prompt": ruling.prompt, **adaptive_meta(room), **meta},
    )


def _rule(room: Room, player: Player, text: str, now: datetime, *, timeout: bool = False, late_text: str = "") -> list[Event]:
    """Judge the buzz holder's answer, write the response row, then describe the ruling."""
    settings = room_settings(room)
    tossup = _tossup(room)
    if timeout:
        ruling = Ruling(verdict="reject")
    else:
        ruling = judge(current_item(room).answer, text, question_text=" ".join(tossup.words), word_index=room.buzz_word_index)
        if ruling.verdict == "prompt" and room.buzz_prompts >= MAX_PROMPTS:
            ruling = Ruling(verdict="reject", score=ruling.score, matched=ruling.matched)
    word_index = room.buzz_word_index or 0
    meta: dict[str, Any] = {"timeout": True} if timeout else {}
    if late_text:
        meta["late_text"] = late_text
    base = {"type": "ruling", "qid": room.qid, "player_id": player.pk, "text": text, "verdict": ruling.verdict}

    if ruling.verdict == "prompt":
        room.buzz_prompts += 1
        room.buzz_deadline = now + timedelta(milliseconds=settings["answer_ms"])
        _record(room, player, text, ruling, 0, now, **meta)
        return [{**base, "points": 0, "prompt": ruling.prompt, "deadline_ms": settings["answer_ms"]}]

    if ruling.verdict == "accept":
        power = tossup.power_index is not None and word_index <= tossup.power_index
        points = settings["power_points"] if power else settings["points"]
    else:
        points = settings["neg_points"] if word_index < tossup.n_words else 0
    _record(room, player, text, ruling, points, now, **meta)
    if points:
        Player.objects.filter(pk=player.pk).update(score=F("score") + points)
    events: list[Event] = [{**base, "points": points}]
    if points:
        events.append(scores_event(room))
    if ruling.verdict == "accept":
        return events + _end(room, "answered")
    room.phase = Room.Phase.READING
    room.reveal_base = word_index
    room.reveal_anchor = now
    room.buzz_player = None
    room.buzz_deadline = None
    room.buzz_word_index = None
    return events


# --- public transitions ----------------------------------------------------------------------------


def room_join(*, slug: str, agent: Agent, name: str, initial_settings: dict[str, Any], now: datetime) -> tuple[Player, Outcome]:
    name = name.strip()
    if not 1 <= len(name) <= 40:
        raise PlayError("bad_name", "name must be 1 to 40 characters")
    with transaction.atomic():
        room, created = Room.objects.get_or_create(slug=slug)
        room = _locked(slug)
        if created and initial_settings:
            room.settings = initial_settings
            room.save(update_fields=["settings"])
        player, _ = Player.objects.get_or_create(room=room, agent=agent, defaults={"name": name})
        Player.objects.filter(pk=player.pk).update(name=name, connections=F("connections") + 1)
        player.refresh_from_db()
        hello = {"type": "hello", "player_id": player.pk, "room": room.slug, "state": hello_state(room, now)}
        return player, Outcome(events=[scores_event(room)], reply=[hello])


def room_leave(*, slug: str, player_id: int) -> Outcome:
    with transaction.atomic():
        room = _locked(slug)
        Player.objects.filter(pk=player_id, connections__gt=0).update(connections=F("connections") - 1)
        return Outcome(events=[scores_event(room)])


def room_next(*, slug: str, player_id: int, now: datetime, qid: str = "") -> Outcome:
    """Start a tossup when none is running. Naming the running tossup's qid skips it; without it a
    `next` that crosses another player's (both pressed at once) is refused instead of burning a tossup."""
    with transaction.atomic():
        room = _locked(slug)
        _player(room, player_id)
        events = _advance(room, now)
        if room.phase == Room.Phase.BUZZED:
            raise PlayError("busy", "wait for the ruling before moving on")
        if room.phase == Room.Phase.READING:
            if qid != room.qid:
                raise PlayError("busy", "a tossup is running; send its qid with next to skip it")
            events += _end(room, "skipped")
        room.item = _pick_item(room)
        room.qid = secrets.token_hex(6)
        room.phase = Room.Phase.READING
        room.started_at = room.reveal_anchor = now
        room.reveal_base = room.sent_upto = 0
        room.buzz_prompts = 0
        room.locked_out = []
        events.append(tossup_event(room))
        events += _advance(room, now)
        room.save()
        return Outcome(events=events)


def room_buzz(*, slug: str, player_id: int, qid: str, now: datetime) -> Outcome:
    with transaction.atomic():
        room = _locked(slug)
        _player(room, player_id)
        events = _advance(room, now)
        outcome = Outcome(events=events)
        if room.phase == Room.Phase.IDLE or qid != room.qid:
            outcome.reply.append(PlayError("no_tossup", "no tossup is running with that qid").as_event())
        elif room.phase == Room.Phase.BUZZED:
            outcome.reply.append(PlayError("buzzer_taken", "another player holds the buzzer").as_event())
        elif player_id in room.locked_out:
            outcome.reply.append(PlayError("locked_out", "you already buzzed on this tossup").as_event())
        else:
            answer_ms = room_settings(room)["answer_ms"]
            room.phase = Room.Phase.BUZZED
            room.buzz_player_id = player_id
            room.buzz_word_index = room.sent_upto
            room.buzz_deadline = now + timedelta(milliseconds=answer_ms)
            room.buzz_prompts = 0
            room.locked_out = [*room.locked_out, player_id]
            events.append(
                {
                    "type": "buzz",
                    "qid": room.qid,
                    "player_id": player_id,
                    "word_index": room.buzz_word_index,
                    "deadline_ms": answer_ms,
                }
            )
        room.save()
        return outcome


def room_answer(*, slug: str, player_id: int, qid: str, text: str, now: datetime) -> Outcome:
    with transaction.atomic():
        room = _locked(slug)
        player = _player(room, player_id)
        if room.phase != Room.Phase.BUZZED or qid != room.qid or room.buzz_player_id != player_id:
            raise PlayError("not_your_buzz", "you do not hold the buzzer")
        if room.buzz_deadline is not None and now > room.buzz_deadline + LATE_ANSWER_GRACE:
            events = _rule(room, player, "", now, timeout=True, late_text=text)
        else:
            events = _rule(room, player, text, now)
        room.save()
        return Outcome(events=events)


def room_tick(*, slug: str, driver_id: str, now: datetime) -> TickResult:
    """The clock: reveal due words, expire the answer deadline and the dead time. One process leads."""
    with transaction.atomic():
        room = _locked(slug)
        if room.driver and room.driver != driver_id and room.driver_until and room.driver_until > now:
            return TickResult(events=[], wake_in=1.0, leader=False)
        fields_before = (room.phase, room.sent_upto, room.buzz_deadline)
        lease_changed = room.driver != driver_id or not room.driver_until or room.driver_until - now < LEASE / 2
        if lease_changed:
            room.driver, room.driver_until = driver_id, now + LEASE
        events: list[Event] = []
        if (
            room.phase == Room.Phase.BUZZED
            and room.buzz_player_id
            and room.buzz_deadline
            and now >= room.buzz_deadline + LATE_ANSWER_GRACE
        ):
            holder = Player.objects.select_related("agent").get(pk=room.buzz_player_id)
            events += _rule(room, holder, "", now, timeout=True)
        events += _advance(room, now)
        if lease_changed or events or fields_before != (room.phase, room.sent_upto, room.buzz_deadline):
            room.save()
        return TickResult(events=events, wake_in=_wake_in(room, now), leader=True)


def room_release(*, slug: str, driver_id: str) -> None:
    Room.objects.filter(slug=slug, driver=driver_id).update(driver="", driver_until=None)


def room_chat(*, slug: str, player_id: int, text: str) -> Outcome:
    text = text.strip()
    if not text:
        raise PlayError("empty", "empty chat message")
    with transaction.atomic():
        room = Room.objects.get(slug=slug)
        player = _player(room, player_id)
        ChatMessage.objects.create(room=room, player=player, text=text)
    return Outcome(events=[{"type": "chat", "player_id": player.pk, "name": player.name, "text": text}])


def room_update_settings(*, slug: str, player_id: int, changes: dict[str, Any]) -> Outcome:
    clean = settings_clean(changes)
    with transaction.atomic():
        room = _locked(slug)
        _player(room, player_id)
        if room.phase != Room.Phase.IDLE:
            raise PlayError("busy", "settings change between tossups")
        room.settings = {**room.settings, **clean}
        room.save(update_fields=["settings"])
        return Outcome(events=[{"type": "settings", "settings": room_settings(room)}])


def room_report(*, slug: str, player_id: int, qid: str, comment: str = "") -> Outcome:
    """"I was right": flag the player's latest ruling on a tossup for a researcher to review."""
    from quizsite.items.models import RulingReport

    with transaction.atomic():
        room = Room.objects.get(slug=slug)
        player = _player(room, player_id)
        response = (
            Response.objects.filter(agent=player.agent, room=room.slug, meta__qid=qid).order_by("-id").first()
        )
        if response is None:
            raise PlayError("nothing_to_report", "you have no ruling on that tossup")
        report, _ = RulingReport.objects.get_or_create(
            response=response, reporter=player.agent, defaults={"comment": comment[:500]}
        )
    return Outcome(reply=[{"type": "reported", "qid": qid, "response_id": response.pk, "report_id": report.pk}])
