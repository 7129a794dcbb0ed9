"""Room transitions: join, next, buzz, answer, the clock's reveal and expiry, chat, settings, reports.

The process that leads a room (play/actor.py) owns its `Room` object and calls these functions one at a
time, so no row lock is needed for buzzer order: the first buzz that reaches the leader wins. Each
function that writes runs in one transaction (`step()`, play/work.py: its rows are written with the
other rooms' of the same group commit) and saves the room's live fields *fenced* by the leader's lease:
a process that lost the lease cannot write, and raises `LostLease` instead. Events for
the room are returned in an Outcome and sent by the caller only after the commit. Time is passed in
(`now`) so tests and the clock agree on one server time.
"""

from __future__ import annotations

import random
import re
import secrets
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from quizsite.agents.models import Agent
from quizsite.items.models import Item, Response, RulingReport
from quizsite.items.tossups import TossupText, sentence_end_flags
from quizsite.judge import JUDGE_VERSION, Ruling, judge

from . import clock
from .bot_catalog import bots_setting_apply, bots_setting_clean, bots_setting_shape
from .messages import (
    Event,
    current_item,
    history_entry,
    ms_between,
    room_settings,
    scores_event,
    tossup_end_event,
    tossup_event,
    words_event,
)
from .models import ChatMessage, Player, Room, TossupReading
from .names import BadName, name_clean, name_key, name_unique_among
from .picking import adaptive_meta, adaptive_pick
from .room_options import OPTION_KEYS, BadOption, option_clean, options_check, tossups_filtered
from .roster import roster_of
from .work import Work, step
from .writer import defers_writes

MAX_PROMPTS = 2
# An answer sent just before the deadline may arrive a little after it; the clock rules the timeout only
# once this grace has passed too, and an answer that arrives within it is judged.
LATE_ANSWER_GRACE = timedelta(milliseconds=750)
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
# What a buzz changes (the leader knows the buzzer is a player of the room).
BUZZ_FIELDS = ("phase", "sent_upto", "buzz_player", "buzz_word_index", "buzz_deadline", "buzz_prompts", "locked_out")
# The room's live fields, written together by `_save`.
LIVE_FIELDS = (
    "settings", "phase", "item", "qid", "started_at", "reveal_base", "reveal_anchor", "sent_upto", "buzz_player",
    "buzz_word_index", "buzz_deadline", "buzz_prompts", "locked_out", "read_items", "paused",
)


class PlayError(Exception):
    """A refused request; the consumer answers it with an `error` message and keeps the socket open."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message

    def as_event(self) -> Event:
        return {"type": "error", "code": self.code, "message": self.message}


# NUL and lone surrogates (JSON's "\ud800" escape parses to one): no database column stores them, and
# UTF-8 has no encoding for a surrogate. One such answer failed its insert and, with it, every other
# room's rows in the same group commit (play/writer.py).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def text_storable(text: str) -> bool:
    """Whether a client's text can be stored and sent back as it is (no NUL, no lone surrogate)."""
    return _UNSTORABLE.search(text) is None


def _unstorable_strings(value: Any) -> bool:
    """Whether any string in a settings value (lists and objects walked, keys too) is not storable;
    iterative, so no nesting can exhaust the stack."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            if not text_storable(current):
                return True
        elif isinstance(current, list):
            stack.extend(current)
        elif isinstance(current, dict):
            stack.extend(current.keys())
            stack.extend(current.values())
    return False


@dataclass
class Outcome:
    events: list[Event] = field(default_factory=list)
    reply: list[Event] = field(default_factory=list)


def settings_clean(raw: dict[str, Any], *, check_set: bool = True) -> dict[str, Any]:
    """Validate room settings from a query string or a `settings` message; unknown keys are refused.
    A join's query string is checked for the set only when it makes the room (`check_set=False` before)."""
    clean: dict[str, Any] = {}
    for key, value in raw.items():
        if _unstorable_strings(key) or _unstorable_strings(value):  # a database would refuse it, and fail others' rows
            raise PlayError("bad_settings", f"{key!r} must be valid text, without NUL characters or lone surrogates")
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
        elif key == "bots":  # play/bots.py: the agents sitting in the room as players
            try:
                clean[key] = bots_setting_clean(value) if check_set else bots_setting_shape(value)
            except ValueError as exc:
                raise PlayError("bad_settings", str(exc)) from None
        elif key in TEXT_SETTINGS:
            if not isinstance(value, str) or len(value) > 100:
                raise PlayError("bad_settings", f"{key} must be a short string")
            clean[key] = value
        elif key in OPTION_KEYS:  # room_options.py: categories, difficulty, auto-advance
            try:
                clean[key] = option_clean(key, value)
            except BadOption as exc:
                raise PlayError("bad_settings", str(exc)) from None
        else:
            raise PlayError("bad_settings", f"unknown setting {key!r}")
    if check_set and clean.get("set") and not Item.objects.filter(item_set__slug=clean["set"], kind=Item.Kind.TOSSUP).exists():
        raise PlayError("bad_settings", f"no tossups in item set {clean['set']!r}")
    if check_set:
        try:
            options_check(clean)
        except BadOption as exc:
            raise PlayError("bad_settings", str(exc)) from None
    return clean


# --- players ------------------------------------------------------------------------------------------


def room_join(*, room: Room, agent_id: int, name: str, now: datetime, taken: dict[int, str] | None = None) -> Player:
    """The agent's player in this room (one per agent: a reconnect or a second tab is the same player),
    named as asked, with a suffix when another player of the room already shows that name. `taken`
    (player id -> name) is the leader's copy of the room's names; without it they are read here."""
    result = room_join_many(room=room, requests=[(agent_id, name)], now=now, taken=taken)[0]
    if isinstance(result, PlayError):
        raise result
    return result


def room_join_many(*, room: Room, requests: list[tuple[int, str]], now: datetime,
                   taken: dict[int, str] | None = None) -> list[Player | PlayError]:
    """`room_join` for a crowd arriving together (the leader batches joins, play/writer.py): one
    result per (agent id, name) request, in order, a refused one as its PlayError."""
    return rooms_join_many(requests=[(room, agent_id, name) for agent_id, name in requests], now=now,
                           taken={room.pk: taken} if taken is not None else None)


def rooms_join_many(*, requests: list[tuple[Room, int, str]], now: datetime,
                    taken: dict[int, dict[int, str]] | None = None) -> list[Player | PlayError]:
    """`room_join` for crowds arriving together in any number of rooms, in one read and one insert of
    players for all of them. Names are made unique within each room in request order, as if the
    requests had come one by one. `taken`: room id -> the leader's copy of that room's names (player
    id -> name); the names of a room without it are read here."""
    with step():
        rooms = {room.pk: room for room, _, _ in requests}
        taken = dict(taken or {})
        missing = [pk for pk in rooms if pk not in taken]
        if missing:
            for pk in missing:
                taken[pk] = {}
            for pid, room_id, name in Player.objects.filter(room_id__in=missing).values_list("id", "room_id", "name"):
                taken[room_id][pid] = name
        names: dict[int, dict[Any, str]] = {pk: dict(taken[pk]) for pk in rooms}  # player id (or agent) -> name
        keys = {pk: Counter(name_key(n) for n in names[pk].values()) for pk in rooms}  # the names shown, by name_key
        players = {(p.room_id, p.agent_id): p for p in
                   Player.objects.filter(room_id__in=list(rooms), agent_id__in={a for _, a, _ in requests})}
        results: list[Player | PlayError] = []
        new: dict[tuple[int, int], Player] = {}
        renamed: dict[tuple[int, int], Player] = {}
        joined: set[tuple[int, int]] = set()
        for room, agent_id, asked in requests:
            try:
                name = name_clean(asked)
            except BadName as exc:
                results.append(PlayError("bad_name", str(exc)))
                continue
            key = (room.pk, agent_id)
            player = players.get(key)
            own = ("agent", agent_id) if player is None or player.pk is None else player.pk
            room_names, room_keys = names[room.pk], keys[room.pk]
            if own in room_names:  # a player who comes back may keep the name it shows
                _count_down(room_keys, name_key(room_names[own]))
            name = name_unique_among(name, room_keys)
            room_names[own] = name
            room_keys[name_key(name)] += 1
            if player is None:
                player = players[key] = new[key] = Player(room=room, agent_id=agent_id, name=name, last_seen=now)
            elif player.name != name:
                player.name = name
                if player.pk is not None:
                    renamed[key] = player
            player.last_seen = now
            results.append(player)
            joined.add(key)
        Player.objects.bulk_create(new.values())
        if renamed:
            Player.objects.bulk_update(renamed.values(), ["name", "last_seen"])
        seen = [players[k].pk for k in joined if k not in new and k not in renamed]
        if seen:
            Player.objects.filter(pk__in=seen).update(last_seen=now)
    return results


def _count_down(counter: Counter[str], key: str) -> None:
    counter[key] -= 1
    if counter[key] <= 0:
        del counter[key]


def _player(room: Room, player_id: int) -> Player:
    roster = roster_of(room)
    if roster is not None:
        player = roster.player(room, player_id)
        if player is None:
            raise PlayError("not_joined", "join the room first")
        return player
    try:
        return Player.objects.select_related("agent").get(pk=player_id, room=room)
    except Player.DoesNotExist:
        raise PlayError("not_joined", "join the room first") from None


# --- the reading clock ----------------------------------------------------------------------------------


@lru_cache(maxsize=512)
def _schedule(item_id: int, ms_per_word: int, words: tuple[str, ...]) -> list[int]:
    return clock.schedule(sentence_end_flags(list(words)), ms_per_word)


def _cum(room: Room) -> list[int]:
    item = current_item(room)
    return _schedule(item.pk, room_settings(room)["ms_per_word"], tuple(item.data["words"]))


def _tossup(room: Room) -> TossupText:
    data = current_item(room).data
    return TossupText(words=data["words"], clue_ends=data["clue_ends"], power_index=data.get("power_index"))


def due_ms(room: Room, index: int) -> int | None:
    """Epoch ms at which word `index` is due by the room's clock (for clients to measure lateness)."""
    if room.reveal_anchor is None:
        return None
    return int(room.reveal_anchor.timestamp() * 1000) + clock.reveal_offset(_cum(room), room.reveal_base, index)


def room_reveal(*, room: Room, now: datetime) -> list[Event]:
    """The words due by `now` that were not sent yet. Touches no database: the schedule is a pure function
    of the anchor the last transition saved, so any successor computes the same."""
    if room.phase != Room.Phase.READING or room.reveal_anchor is None:
        return []
    revealed = clock.revealed_count(_cum(room), room.reveal_base, ms_between(now, room.reveal_anchor))
    if revealed <= room.sent_upto:
        return []
    event = words_event(room, room.sent_upto, revealed, t=due_ms(room, room.sent_upto))
    room.sent_upto = revealed
    return [event]


def room_start_reading(*, room: Room, now: datetime) -> list[Event]:
    """Reading (re)starts when the transition that starts it is told, not when its request arrived: a
    request that waited for the database would otherwise have the words of its wait thrown at the
    players in one burst. The leader calls this right after publishing a transition."""
    if room.phase != Room.Phase.READING or room.reveal_anchor is not None or room.paused:
        return []
    room.reveal_anchor = now
    return room_reveal(room=room, now=now)


def _reading_over(room: Room, now: datetime) -> bool:
    cum = _cum(room)
    if room.reveal_anchor is None or room.sent_upto < len(cum):
        return False
    last_shown = clock.reveal_offset(cum, room.reveal_base, len(cum) - 1)
    return ms_between(now, room.reveal_anchor) >= last_shown + room_settings(room)["dead_ms"]


def room_expiry_due(*, room: Room, now: datetime) -> bool:
    """Whether the buzz deadline or the dead time after the last word has passed (room_expire has work)."""
    if room.phase == Room.Phase.BUZZED:
        return room.buzz_deadline is not None and now >= room.buzz_deadline + LATE_ANSWER_GRACE
    return room.phase == Room.Phase.READING and _reading_over(room, now)


def room_wake_in(*, room: Room, now: datetime) -> float:
    """Seconds until the clock has something to do."""
    if room.phase == Room.Phase.BUZZED and room.buzz_deadline:
        return (room.buzz_deadline + LATE_ANSWER_GRACE - now).total_seconds()
    if room.phase == Room.Phase.READING:
        if room.paused:
            return 1.0
        if room.reveal_anchor is None:
            return 0.0
        cum = _cum(room)
        if room.sent_upto < len(cum):
            due = clock.reveal_offset(cum, room.reveal_base, room.sent_upto)
        else:
            due = clock.reveal_offset(cum, room.reveal_base, len(cum) - 1) + room_settings(room)["dead_ms"]
        return (due - ms_between(now, room.reveal_anchor)) / 1000
    return 1.0


@defers_writes
def room_expire(*, room: Room, now: datetime, heard: int = 0) -> Outcome:
    """Rule a buzz whose deadline passed (no answer) or end a tossup whose dead time passed.
    `heard`: the players online now, recorded with the tossup if it ends (TossupReading)."""
    with step() as work:
        events: list[Event] = []
        if room.phase == Room.Phase.BUZZED and room_expiry_due(room=room, now=now):
            holder = _player(room, room.buzz_player_id or 0)
            events += _rule(work, room, holder, "", now, timeout=True, heard=heard)
        events += room_reveal(room=room, now=now)
        if room.phase == Room.Phase.READING and _reading_over(room, now):
            events += _end(work, room, "timeout", heard)
        if events:
            work.save_room(room, LIVE_FIELDS)
        return Outcome(events=events)


def _end(work: Work, room: Room, reason: str, heard: int = 0) -> list[Event]:
    """End the tossup, and record it (who heard it, the history entry) in the same transaction."""
    event = tossup_end_event(room, reason, pending=work.responses)
    if room.item_id is not None:
        work.rows.append(TossupReading(room=room, item_id=room.item_id, qid=room.qid, heard=heard, reason=reason,
                                           summary=history_entry(event)))
    room.phase = Room.Phase.IDLE
    room.buzz_player = None
    room.buzz_deadline = None
    room.buzz_word_index = None
    if room.item_id not in room.read_items:
        room.read_items = [*room.read_items, room.item_id][-5000:]
    return [event]


def _pick_item(work: Work, room: Room, present: list[int]) -> Item:
    settings = room_settings(room)
    ids = list(tossups_filtered(settings).values_list("id", flat=True))
    if not ids:
        raise PlayError("no_items", "no tossups match this room's set, categories and difficulty")
    unread = sorted(set(ids) - set(room.read_items))
    if not unread:  # every tossup read: start over
        room.read_items = []
        unread = ids
    if settings.get("adaptive"):
        agents = list(Agent.objects.filter(players__room=room, players__pk__in=present).distinct())
        if not agents:
            agents = list(Agent.objects.filter(players__room=room).distinct())
        picked = adaptive_pick(room_slug=room.slug, present=agents, candidate_ids=unread)
        if picked is not None:
            item, serve = picked
            work.rows.append(serve)
            return item
    return Item.objects.select_related("item_set").get(pk=random.choice(unread))


# --- judging and recording -------------------------------------------------------------------------


def _record(work: Work, room: Room, player: Player, text: str, ruling: Ruling, points: int, now: datetime,
            **meta: Any) -> None:
    tossup = _tossup(room)
    word_index = room.buzz_word_index or 0
    correct = {"accept": True, "reject": False}.get(ruling.verdict)
    work.responses.append(Response(
        agent_id=player.agent_id,
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
        meta={"qid": room.qid, "matched": ruling.matched, "prompt": ruling.prompt, "rule": ruling.rule,
              **adaptive_meta(room_slug=room.slug, settings=room.settings, item_id=room.item_id), **meta},
    ))


def _rule(work: Work, room: Room, player: Player, text: str, now: datetime, *, timeout: bool = False,
          late_text: str = "",
          heard: int = 0) -> list[Event]:
    """Judge the buzz holder's answer, write the response row, then describe the ruling."""
    settings = room_settings(room)
    tossup = _tossup(room)
    if timeout:
        ruling = Ruling(verdict="reject", rule="timeout")
    else:
        ruling = judge(current_item(room).answer, text, question_text=" ".join(tossup.words), word_index=room.buzz_word_index)
        if ruling.verdict == "prompt" and room.buzz_prompts >= MAX_PROMPTS:
            ruling = Ruling(verdict="reject", score=ruling.score, matched=ruling.matched, rule="prompt_limit")
    word_index = room.buzz_word_index or 0
    meta: dict[str, Any] = {"timeout": True} if timeout else {}
    if late_text:
        meta["late_text"] = late_text
    base = {"type": "ruling", "qid": room.qid, "player_id": player.pk, "text": text, "verdict": ruling.verdict}

    if ruling.verdict == "prompt":
        room.buzz_prompts += 1
        room.buzz_deadline = now + timedelta(milliseconds=settings["answer_ms"])
        _record(work, room, player, text, ruling, 0, now, **meta)
        return [{**base, "points": 0, "prompt": ruling.prompt, "deadline_ms": settings["answer_ms"]}]

    if ruling.verdict == "accept":
        power = tossup.power_index is not None and word_index <= tossup.power_index
        points = settings["power_points"] if power else settings["points"]
    else:
        points = settings["neg_points"] if word_index < tossup.n_words else 0
    _record(work, room, player, text, ruling, points, now, **meta)
    if points:
        work.add_score(player.pk, points)
    events: list[Event] = [{**base, "points": points}]
    if points:
        events.append(scores_event(room, changed={player.pk: player.score + points}))
    if ruling.verdict == "accept":
        return events + _end(work, room, "answered", heard)
    room.phase = Room.Phase.READING
    room.reveal_base = word_index
    room.reveal_anchor = None  # set when the ruling is told (room_start_reading)
    room.buzz_player = None
    room.buzz_deadline = None
    room.buzz_word_index = None
    return events


# --- public transitions ----------------------------------------------------------------------------


@defers_writes
def room_next(*, room: Room, player_id: int | None, now: datetime, qid: str = "",
              present: list[int] | None = None) -> Outcome:
    """Start a tossup when none is running. Naming the running tossup's qid skips it; without it a
    `next` that crosses another player's (both pressed at once) is refused instead of burning a tossup.
    `player_id` None: the room's auto-advance. A paused room resumes with the new tossup."""
    with step() as work:
        if player_id is not None:
            _player(room, player_id)
        events = room_reveal(room=room, now=now)
        if room.phase == Room.Phase.BUZZED:
            raise PlayError("busy", "wait for the ruling before moving on")
        if room.phase == Room.Phase.READING:
            if qid != room.qid:
                raise PlayError("busy", "a tossup is running; send its qid with next to skip it")
            events += _end(work, room, "skipped", len(present or []))
        if room.paused:
            room.paused = False
            events.append({"type": "paused", "paused": False, "player_id": player_id})
        room.item = _pick_item(work, room, present or [])
        room.qid = secrets.token_hex(6)
        room.phase = Room.Phase.READING
        room.started_at, room.reveal_anchor = now, None  # reading starts when the tossup is told
        room.reveal_base = room.sent_upto = 0
        room.buzz_prompts = 0
        room.locked_out = []
        events.append(tossup_event(room))
        work.save_room(room, LIVE_FIELDS)
        return Outcome(events=events)


@defers_writes
def room_buzz(*, room: Room, player_id: int, qid: str, now: datetime) -> Outcome:
    """The first buzz to reach the leader holds the buzzer; its word index is what the clock had revealed."""
    events = room_reveal(room=room, now=now)
    outcome = Outcome(events=events)
    if room.phase == Room.Phase.IDLE or qid != room.qid:
        outcome.reply.append(PlayError("no_tossup", "no tossup is running with that qid").as_event())
    elif player_id in room.locked_out:  # the holder's own second buzz too: nobody else holds it
        outcome.reply.append(PlayError("locked_out", "you already buzzed on this tossup").as_event())
    elif room.phase == Room.Phase.BUZZED:
        outcome.reply.append(PlayError("buzzer_taken", "another player holds the buzzer").as_event())
    elif room.paused:
        outcome.reply.append(PlayError("paused", "the room is paused; resume first").as_event())
    else:
        with step() as work:
            answer_ms = room_settings(room)["answer_ms"]
            room.phase = Room.Phase.BUZZED
            room.buzz_player_id = player_id
            room.buzz_word_index = room.sent_upto
            room.buzz_deadline = now + timedelta(milliseconds=answer_ms)
            room.buzz_prompts = 0
            room.locked_out = [*room.locked_out, player_id]
            work.save_room(room, BUZZ_FIELDS)
        events.append(
            {"type": "buzz", "qid": room.qid, "player_id": player_id, "word_index": room.buzz_word_index,
             "deadline_ms": answer_ms}
        )
    return outcome


@defers_writes
def room_answer(*, room: Room, player_id: int, qid: str, text: str, now: datetime, heard: int = 0) -> Outcome:
    if room.phase != Room.Phase.BUZZED or qid != room.qid or room.buzz_player_id != player_id:
        raise PlayError("not_your_buzz", "you do not hold the buzzer")
    with step() as work:
        player = _player(room, player_id)
        if room.buzz_deadline is not None and now > room.buzz_deadline + LATE_ANSWER_GRACE:
            events = _rule(work, room, player, "", now, timeout=True, late_text=text, heard=heard)
        else:
            events = _rule(work, room, player, text, now, heard=heard)
        work.save_room(room, LIVE_FIELDS)
        return Outcome(events=events)


def room_chat(*, room: Room, player_id: int, text: str) -> Outcome:
    text = text.strip()
    if not text:
        raise PlayError("empty", "empty chat message")
    player = _player(room, player_id)
    ChatMessage.objects.create(room=room, player=player, text=text)
    return Outcome(events=[{"type": "chat", "player_id": player.pk, "name": player.name, "text": text}])


def room_update_settings(*, room: Room, player_id: int, changes: dict[str, Any]) -> Outcome:
    if "bots" in changes:  # {"add": NAME} / {"remove": NAME} apply to the room's list
        try:
            bots = bots_setting_apply(current=room_settings(room).get("bots") or [], value=changes["bots"])
        except ValueError as exc:
            raise PlayError("bad_settings", str(exc)) from None
        changes = {**changes, "bots": bots}
    clean = settings_clean(changes)
    with step() as work:
        _player(room, player_id)
        if room.phase != Room.Phase.IDLE:
            raise PlayError("busy", "settings change between tossups")
        merged = {**room.settings, **clean}
        if clean.keys() & {"set", "category", "categories", "difficulty"}:
            try:
                options_check(merged)
            except BadOption as exc:
                raise PlayError("bad_settings", str(exc)) from None
        room.settings = merged
        work.save_room(room, LIVE_FIELDS)
        return Outcome(events=[{"type": "settings", "settings": room_settings(room)}])


def room_pause(*, room: Room, player_id: int, paused: bool, now: datetime) -> Outcome:
    """Pause or resume reading for everyone. Pausing shows the words due so far and stops the clock
    (no anchor: nothing is due); resuming leaves the anchor for room_start_reading to set when the
    resume is told, so reading goes on one word at a time from where it stopped, never in a burst."""
    with step() as work:
        _player(room, player_id)
        events = room_reveal(room=room, now=now)
        if room.paused == paused:
            return Outcome(events=events, reply=[{"type": "paused", "paused": paused, "player_id": player_id}])
        room.paused = paused
        if paused and room.phase == Room.Phase.READING:
            room.reveal_base, room.reveal_anchor = room.sent_upto, None
        work.save_room(room, LIVE_FIELDS)
        events.append({"type": "paused", "paused": paused, "player_id": player_id})
        return Outcome(events=events)


def room_report(*, room: Room, player_id: int, qid: str, comment: str = "") -> Outcome:
    """"I was right": flag the player's latest ruling on a tossup for a researcher to review."""
    with step():
        player = _player(room, player_id)
        response = (
            Response.objects.filter(agent_id=player.agent_id, room=room.slug, meta__qid=qid).order_by("-id").first()
        )
        if response is None:
            raise PlayError("nothing_to_report", "you have no ruling on that tossup")
        report, _ = RulingReport.objects.get_or_create(
            response=response, reporter_id=player.agent_id, defaults={"comment": comment[:500]}
        )
    return Outcome(reply=[{"type": "reported", "qid": qid, "response_id": response.pk, "report_id": report.pk}])


def room_sync(*, room: Room, qid: str, have: int) -> list[Event]:
    """What a client that missed messages needs: the words of the running tossup from `have` on (never
    past what the clock revealed), or the end of the tossup it asks about."""
    if qid and qid == room.qid and room.phase != Room.Phase.IDLE:
        have = max(0, min(have, room.sent_upto))
        return [words_event(room, have, room.sent_upto, t=due_ms(room, have) if room.sent_upto > have else None)]
    if qid and qid == room.qid and room.item is not None:
        return [tossup_end_event(room, "ended")]
    return [PlayError("no_tossup", "no tossup is running with that qid").as_event()]
