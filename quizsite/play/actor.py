"""The leader of one room: its live state in memory, its reading clock, one command at a time.

Exactly one process leads a room (a lease in the room row, play/hub.py). The leader keeps the `Room`
row object and the players in memory, reveals words on its own clock without a database write, and
writes only at transitions (a tossup starts, a buzz, a ruling, an end), each before its events are
published. A transition runs on a copy of the room and replaces the state only after its commit, so
a failed write (or a lost lease) leaves the room as it was. The lock keeps the clock from revealing a
word while a buzz that stopped reading is being committed.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import secrets
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from channels.db import database_sync_to_async
from django.utils import timezone

from quizsite.agents.services import agent_get_or_create_guests

from . import leases, selectors, services
from .bots import RoomBots
from .bucket import Bucket
from .messages import Event, chat_recent, hello_state, history_entry, room_settings, scores_event
from .models import Player, Room
from .outage import db_unreachable, log_failure, unavailable, warn_unreachable
from .roster import Roster
from .services import Outcome, PlayError
from .work import LostLease

if TYPE_CHECKING:
    from .hub import Hub

log = logging.getLogger(__name__)
PRESENCE_FLUSH_S = 0.25  # joins and leaves reach the room in batches, not one broadcast per join
CHAT_BURST, CHAT_PER_S = 20.0, 5.0  # chat lines per room: a crowd cannot drown the room
# Chat lines per player: one chatter within its socket's own limit (8 messages a second) could otherwise
# take the whole room's share and leave nobody else a line.
PLAYER_CHAT_BURST, PLAYER_CHAT_PER_S = 5.0, 1.0
CHAT_KEPT = 30
HISTORY_KEPT = 10  # past tossups in the hello and the `history` answer
# Where the hello's player list goes: NUL never reaches a name or a chat line (the consumer refuses it),
# and "players" is the state's first key, so the first occurrence is this one.
PLAYERS_MARK = "\x00players\x00"
PLAYERS_JSON = '"\\u0000players\\u0000"'
IDLE_STOP = timedelta(seconds=10)  # a room nobody is connected to stops leading after this

db = database_sync_to_async
# How the leader answers the requester: JSON texts for them alone, and for a join, who they are now.
Reply = Callable[[list[str], dict[str, Any]], Awaitable[None]]


def _buzz_fields(*, pk: int) -> tuple[int | None, list[int]] | None:
    return Room.objects.filter(pk=pk).values_list("buzz_player_id", "locked_out").first()


def dumps(event: Event) -> str:
    return json.dumps(event, ensure_ascii=False)


class RoomActor:
    def __init__(self, hub: Hub, room: Room, players: dict[int, dict[str, Any]], online: set[int],
                 agents: dict[int, int], now: datetime):
        self.hub, self.room, self.slug = hub, room, room.slug
        self.players = players
        self.agents = agents
        self.player_texts: dict[int, str] = {}  # each player's hello entry as JSON, until it changes
        # Lent to the services on every copy of the room (copy.copy keeps it): they read no player rows.
        self.room.roster = Roster(players=self.players, agents=self.agents)  # type: ignore[attr-defined]
        self.online: Counter[int] = Counter({pid: 1 for pid in online})
        self.term = secrets.token_hex(4)  # events of this leadership, numbered by seq
        self.seq = 0
        self.lock = asyncio.Lock()
        self.poke = asyncio.Event()
        self.lease_until = now + hub.lease
        self.alone_since: datetime | None = None if online else now
        self.pending_presence: set[int] = set()
        self.chat_room = Bucket(CHAT_PER_S, CHAT_BURST)
        self.chat_players: dict[int, Bucket] = {}
        self.stopped = False
        self.task = asyncio.get_running_loop().create_task(self._clock(), name=f"room-{self.slug}")
        self.presence_task: asyncio.Task | None = None
        self.inbox: asyncio.Queue[tuple[str, dict[str, Any], Reply]] = asyncio.Queue()
        self.inbox_task: asyncio.Task | None = None
        self.joins: set[asyncio.Task] = set()  # forwarded joins under way (kept: the loop holds tasks weakly)
        # The last chat lines and tossups, for hellos: read on the first join, except in a room that has
        # never had a player (every new room), which has neither: fifty new rooms' first joins made 100
        # reads on the database thread the joins wait for (py-spy, `ws_load.py --joins-only --cases 50x10`).
        self.chat: deque[dict[str, Any]] | None = None if players else deque(maxlen=CHAT_KEPT)
        self.history: deque[dict[str, Any]] | None = None if players else deque(maxlen=HISTORY_KEPT)
        self.last_end: Event | None = None  # the last tossup_end this leadership sent, for `sync`
        self.auto_at: float | None = None  # monotonic time of the auto-advance's next tossup
        self.bots = RoomBots(self.slug)  # play/bots.py

    # --- commands (from local sockets or forwarded from other processes) --------------------------------

    async def handle(self, kind: str, payload: dict[str, Any], reply: Reply) -> None:
        """Run one command; `reply` gets the events for the requester alone (and join's identity)."""
        if kind == "join":
            try:
                await self._join(payload, reply)
            except PlayError as exc:
                await reply([dumps(exc.as_event())], {"failed": True})
            return
        try:
            if kind == "leave":
                self._leave(payload["player_id"])
                return
            if kind == "players_reload":  # rows moved under the room (a guest's merge into an account)
                await self._players_reload()
                return
            player_id = payload["player_id"]
            if player_id not in self.players:
                raise PlayError("not_joined", "join the room first")
            events = await getattr(self, f"_on_{kind}")(player_id, payload)
        except PlayError as exc:
            # A refusal for speed counts toward the socket's flood close, wherever the socket is.
            await reply([dumps(exc.as_event())], {"refused": True} if exc.code == "too_fast" else {})
            return
        if events:
            await reply([dumps(e) for e in events], {})

    async def inbox_run(self, kind: str, payload: dict[str, Any], reply: Reply) -> None:
        """Commands forwarded by other processes run one after another, in the order they arrived, but
        joins: a player sends nothing before its join is answered, and a crowd's forwarded joins must go
        to the group commit together, as local ones do, not one commit after another."""
        if kind == "join":
            task = asyncio.get_running_loop().create_task(self._forwarded(kind, payload, reply))
            self.joins.add(task)
            task.add_done_callback(self.joins.discard)
            return
        self.inbox.put_nowait((kind, payload, reply))
        if self.inbox_task is None or self.inbox_task.done():
            self.inbox_task = asyncio.get_running_loop().create_task(self._drain_inbox())

    async def _drain_inbox(self) -> None:
        while not self.inbox.empty():
            await self._forwarded(*self.inbox.get_nowait())

    async def _forwarded(self, kind: str, payload: dict[str, Any], reply: Reply) -> None:
        try:
            await self.handle(kind, payload, reply)
        except Exception as exc:
            if db_unreachable(exc):
                warn_unreachable(log, f"forwarded {kind}", exc)
                await reply([dumps(unavailable().as_event())], {})
                return
            log.exception("room %s: forwarded %s failed", self.slug, kind)
            await reply([dumps(PlayError("server_error", "the server could not handle that message").as_event())], {})

    async def _join(self, payload: dict[str, Any], reply: Reply) -> None:
        item = (self, payload.get("agent_id"), str(payload.get("guest_key") or ""), payload["name"])
        player, chat = await self.hub.writer.run_grouped(_joins_db, item)
        known = self.players.get(player.pk)
        bot = payload.get("bot")
        if bot and self.online[player.pk] > 0:
            raise PlayError("bot_running", "another client of this bot is in the room")
        self.players[player.pk] = {"id": player.pk, "name": player.name, "score": player.score, "bot": bool(bot)}
        self.agents[player.pk] = player.agent_id
        self.player_texts.pop(player.pk, None)
        if bot:
            self.bots.joined(bot, player.pk)
        self.online[player.pk] += 1
        self.alone_since = None
        if known is None or known["name"] != player.name or self.online[player.pk] == 1:
            self._presence(player.pk)
        # Built and handed over with no await in between: the hello is the state as of event `seq`.
        state = hello_state(self.room, timezone.now(), PLAYERS_MARK, chat, self._history_shown())  # type: ignore[arg-type]
        if self.auto_at is not None:
            state["next_in_ms"] = max(0, int((self.auto_at - time.monotonic()) * 1000))
        hello = {"type": "hello", "player_id": player.pk, "room": self.slug, "state": state}
        await reply([self._hello_text(hello)], {"player_id": player.pk, "term": self.term, "seq": self.seq})
        if not bot:  # a person came: start the room's bots that are not here (they leave an empty room)
            self.bots.wake(self._bot_names(), self.online, self.players)

    def _bot_names(self) -> list[str]:
        return list(room_settings(self.room).get("bots") or [])

    def _recent_db(self) -> list[dict[str, Any]]:
        """The room's recent chat (and its history), read once, when its first player joins."""
        if self.chat is None:
            self.chat = deque(chat_recent(self.room), maxlen=CHAT_KEPT)
        if self.history is None:
            self.history = deque(selectors.room_history(room=self.room, limit=HISTORY_KEPT), maxlen=HISTORY_KEPT)
        return list(self.chat)

    async def _players_reload(self) -> None:
        """Read the room's players, and the buzz and lock-out that name them, again: an account that took a
        guest's history merged the guest's player here into its own (accounts.services), and this leader's
        roster still had both, with the guest's score on its own line."""
        async with self.lock:
            players, _, agents = await self.hub.writer.run(leases.players_load, room=self.room,
                                                           online_since=timezone.now())
            fields = await self.hub.writer.run(_buzz_fields, pk=self.room.pk)
            for pid in set(self.players) - set(players):
                self.online.pop(pid, None)
            self.players.clear()
            self.players.update(players)  # the same dicts the roster lent to the services holds
            self.agents.clear()
            self.agents.update(agents)
            self.player_texts.clear()
            if fields is not None:
                self.room.buzz_player_id, self.room.locked_out = fields
        await self.publish([scores_event(self.room)])

    def _leave(self, player_id: int) -> None:
        if self.online.get(player_id, 0) > 0:
            self.online[player_id] -= 1
            if self.online[player_id] == 0:
                self.player_texts.pop(player_id, None)
                self._presence(player_id)
        if not any(self.online.values()) and self.alone_since is None:
            self.alone_since = timezone.now()

    async def _on_next(self, player_id: int, payload: dict[str, Any]) -> list[Event]:
        present = [pid for pid, n in self.online.items() if n > 0]
        return await self._transition(services.room_next, player_id=player_id, qid=str(payload.get("qid") or ""),
                                      present=present)

    async def _on_buzz(self, player_id: int, payload: dict[str, Any]) -> list[Event]:
        return await self._transition(services.room_buzz, player_id=player_id, qid=str(payload.get("qid", "")))

    async def _on_answer(self, player_id: int, payload: dict[str, Any]) -> list[Event]:
        return await self._transition(services.room_answer, player_id=player_id, qid=str(payload.get("qid", "")),
                                      text=payload["text"], heard=self._online_count())

    async def _on_pause(self, player_id: int, payload: dict[str, Any]) -> list[Event]:
        return await self._transition(services.room_pause, player_id=player_id, paused=payload["paused"])

    async def _on_history(self, player_id: int, payload: dict[str, Any]) -> list[Event]:
        if self.history is None:
            loaded = await db(selectors.room_history)(room=self.room, limit=HISTORY_KEPT)
            if self.history is None:
                self.history = deque(loaded, maxlen=HISTORY_KEPT)
        return [{"type": "history", "tossups": self._history_shown()}]

    def _history_shown(self) -> list[dict[str, Any]]:
        """The history, less the tossup being read if it was read here before (a set read through starts
        over): its answer line must not reach anyone before this reading ends."""
        entries = list(self.history or ())
        if self.room.phase != Room.Phase.IDLE:
            entries = [e for e in entries if e.get("item_id") != self.room.item_id]
        return entries

    async def _on_settings(self, player_id: int, payload: dict[str, Any]) -> list[Event]:
        before = set(self._bot_names())
        reply = await self._transition(services.room_update_settings, player_id=player_id, changes=payload["changes"],
                                       timed=False)
        # Added bots start after the commit; removed ones see the `settings` event and leave.
        self.bots.wake([n for n in self._bot_names() if n not in before], self.online, self.players)
        return reply

    async def _on_chat(self, player_id: int, payload: dict[str, Any]) -> list[Event]:
        share = self.chat_players.get(player_id)
        if share is None:
            share = self.chat_players[player_id] = Bucket(PLAYER_CHAT_PER_S, PLAYER_CHAT_BURST)
        if not share.take():  # the player's own share first: a refused line takes nothing from the room's
            raise PlayError("too_fast", "you are chatting too fast; wait a moment")
        if not self.chat_room.take():
            raise PlayError("too_fast", "the room's chat is busy; wait a moment")
        outcome = await self.hub.writer.run(services.room_chat, room=self.room, player_id=player_id, text=payload["text"])
        if self.chat is not None:
            self.chat.extend({k: e[k] for k in ("player_id", "name", "text")} for e in outcome.events)
        await self.publish(outcome.events)
        return []

    async def _on_report(self, player_id: int, payload: dict[str, Any]) -> list[Event]:
        outcome = await self.hub.writer.run(services.room_report, room=self.room, player_id=player_id, qid=str(payload.get("qid", "")),
                                                 comment=payload.get("comment", ""))
        return outcome.reply

    async def _on_sync(self, player_id: int, payload: dict[str, Any]) -> list[Event]:
        have = payload.get("have", 0)
        kwargs: dict[str, Any] = {"room": self.room, "qid": str(payload.get("qid", "")),
                  "have": have if isinstance(have, int) and not isinstance(have, bool) else 0}
        if self.room.phase == Room.Phase.IDLE:
            if self.last_end is not None and self.last_end["qid"] == kwargs["qid"]:
                return [self.last_end]  # the end as it was sent, its reason included, with no database read
            # a leader that took the room after the end rebuilds it: its buzz list is a database read
            return await self.hub.writer.run(services.room_sync, **kwargs)
        return services.room_sync(**kwargs)

    async def _transition(self, service: Callable[..., Outcome], timed: bool = True, **kwargs: Any) -> list[Event]:
        async with self.lock:
            room = copy.copy(self.room)
            if timed:
                kwargs["now"] = timezone.now()
            try:
                outcome = await self.hub.writer.run(service, room=room, **kwargs)
            except LostLease:
                await self.stop(release=False)
                raise PlayError("busy", "the room moved to another server; try again") from None
            self.room = room
            await self._published(outcome)
        self.poke.set()
        return outcome.reply

    async def _published(self, outcome: Outcome) -> None:
        ended = []
        for event in outcome.events:
            if event["type"] == "scores":
                for p in event["players"]:
                    self.players[p["id"]] = {"id": p["id"], "name": p["name"], "score": p["score"],
                                             "bot": bool(p.get("bot"))}
                    self.player_texts.pop(p["id"], None)
            elif event["type"] == "tossup_end":
                self.last_end = event
                ended.append(history_entry(event))
        self._arm_auto_next(outcome.events)
        await self.publish(outcome.events)
        await self.publish(services.room_start_reading(room=self.room, now=timezone.now()))
        for entry in ended:
            if self.history is not None:
                self.history.append(entry)
            asyncio.get_running_loop().create_task(self._stats(entry))

    async def _stats(self, entry: dict[str, Any]) -> None:
        """Per-question statistics, once per tossup end and after its commit, off the clock's path."""
        try:
            # Its own thread and connection (reads only): the room's database thread is where buzzes and
            # rulings write, and 50 rooms ending a tossup together must not queue their statistics there.
            stats = await database_sync_to_async(selectors.item_stats, thread_sensitive=False)(
                item_id=entry["item_id"]
            )
        except Exception as exc:
            log_failure(log, "item statistics", exc, "room %s: statistics of item %s failed", self.slug,
                        entry.get("item_id"))
            return
        entry["stats"] = stats
        await self.publish([{"type": "stats", "qid": entry["qid"], **stats}])

    def _arm_auto_next(self, events: list[Event]) -> None:
        """Auto-advance: a countdown starts when a tossup ends (or the room resumes, or the setting is
        turned on) between tossups; the events that start it carry `next_in_ms`."""
        settings = room_settings(self.room)
        if self.room.phase != Room.Phase.IDLE or self.room.paused or not settings.get("auto_next"):
            self.auto_at = None
            return
        starters = [e for e in events if e["type"] in ("tossup_end", "paused", "settings")]
        if starters:
            ms = int(settings["auto_next_ms"])
            self.auto_at = time.monotonic() + ms / 1000
            for event in starters:
                event["next_in_ms"] = ms

    async def _auto_next(self) -> None:
        self.auto_at = None
        if self.room.phase != Room.Phase.IDLE or self.room.paused or not any(self.online.values()):
            return
        present = [pid for pid, n in self.online.items() if n > 0]
        try:
            await self._transition(services.room_next, player_id=None, present=present)
        except PlayError as exc:  # no tossups left to match: say so to the room
            await self.publish([exc.as_event()])

    def _online_count(self) -> int:
        return sum(1 for n in self.online.values() if n > 0)

    # --- events ---------------------------------------------------------------------------------------

    async def publish(self, events: list[Event]) -> None:
        if events:
            self.seq += 1
            await self.hub.publish(self.slug, self.term, self.seq, [dumps(e) for e in events])

    def _hello_text(self, hello: Event) -> str:
        """The hello as JSON, its player list spliced in from each player's cached entry: a crowd of n
        joining would otherwise serialise n players n times."""
        texts = self.player_texts
        for pid, p in self.players.items():
            if pid not in texts:
                texts[pid] = dumps({**p, "online": self.online.get(pid, 0) > 0})
        return dumps(hello).replace(PLAYERS_JSON, "[" + ",".join(texts[pid] for pid in self.players) + "]", 1)

    def _presence(self, player_id: int) -> None:
        """Joins and leaves go out as one `presence` event per flush, with only the players that changed."""
        self.pending_presence.add(player_id)
        if self.presence_task is None or self.presence_task.done():
            self.presence_task = asyncio.get_running_loop().create_task(self._flush_presence())

    async def _flush_presence(self) -> None:
        await asyncio.sleep(PRESENCE_FLUSH_S)
        changed, self.pending_presence = self.pending_presence, set()
        players = [{**self.players[pid], "online": self.online.get(pid, 0) > 0} for pid in changed if pid in self.players]
        await self.publish([{"type": "presence", "players": players}])

    def refresh_online(self, seen: set[int], now: datetime) -> None:
        """Presence is a lease: a player no process has marked as seen lately is offline, even if the
        socket's clean-up never ran (a killed process, a consumer that died)."""
        for pid, n in list(self.online.items()):
            if n > 0 and pid not in seen:
                self.online[pid] = 0
                self.player_texts.pop(pid, None)
                self._presence(pid)
        if not any(self.online.values()) and self.alone_since is None:
            self.alone_since = now

    def idle(self, now: datetime) -> bool:
        return (self.alone_since is not None and now - self.alone_since > IDLE_STOP
                and self.room.phase != Room.Phase.BUZZED)

    # --- the clock --------------------------------------------------------------------------------------

    async def _clock(self) -> None:
        while not self.stopped:
            self.poke.clear()
            wait = 1.0
            try:
                async with self.lock:
                    now = timezone.now()
                    if now >= self.lease_until:  # the lease lapsed unrenewed: a successor may be reading
                        wait = 0.05
                    else:
                        events = services.room_reveal(room=self.room, now=now)
                        if events:
                            await self.publish(events)
                        if services.room_expiry_due(room=self.room, now=now):
                            room = copy.copy(self.room)
                            outcome = await self.hub.writer.run(services.room_expire, room=room, now=now,
                                                                        heard=self._online_count())
                            self.room = room
                            await self._published(outcome)
                        wait = services.room_wake_in(room=self.room, now=timezone.now())
            except LostLease:
                await self.stop(release=False)
                return
            except Exception as exc:  # a failed write must not kill the room's clock; try again shortly
                log_failure(log, "room clock step", exc, "room %s: clock step failed", self.slug)
                wait = 0.5
            if self.auto_at is not None:
                left = self.auto_at - time.monotonic()
                if left <= 0:
                    try:
                        await self._auto_next()
                    except Exception as exc:
                        log_failure(log, "room auto-advance", exc, "room %s: auto-advance failed", self.slug)
                    continue
                wait = min(wait, left)
            try:
                await asyncio.wait_for(self.poke.wait(), timeout=min(max(wait, 0.001), 1.0))
            except TimeoutError:
                pass

    async def stop(self, *, release: bool = True) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.poke.set()
        self.hub.actor_stopped(self)
        if release:
            try:
                await db(leases.room_release)(room=self.room)
            except Exception as exc:  # in an outage it lapses by itself
                log_failure(log, "lease release", exc, "room %s: could not release the lease", self.slug)


JoinItem = tuple[RoomActor, int | None, str, str]  # the room's leader, agent id (None: a guest), guest key, name


def _joins_db(*, items: list[JoinItem]) -> list[tuple[Player, list[dict[str, Any]]] | PlayError]:
    """The joins of one group commit, in every room this process leads: a crowd costs one read and one
    insert of guests and of players, however many rooms it joins (fifty rooms' first players arrive
    together), not one each per room."""
    guests = iter(agent_get_or_create_guests(items=[(key, name) for _, agent, key, name in items if agent is None]))
    agents = [agent if agent is not None else next(guests).pk for _, agent, _, _ in items]
    actors = {id(actor): actor for actor, *_ in items}
    taken = {a.room.pk: {pid: p["name"] for pid, p in a.players.items()} for a in actors.values()}
    joined = services.rooms_join_many(requests=[(actor.room, agent, name) for (actor, _, _, name), agent
                                                in zip(items, agents, strict=True)], now=timezone.now(), taken=taken)
    chats = {key: actor._recent_db() for key, actor in actors.items()}
    return [p if isinstance(p, PlayError) else (p, chats[id(actor)]) for (actor, *_), p in zip(items, joined, strict=True)]
