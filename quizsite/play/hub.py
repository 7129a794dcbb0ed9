"""One hub per process: the play sockets it holds, fan-out, room leadership and command forwarding.

Why this shape: under load the cost of a live room was its plumbing, not its game. So:
- A room is led by exactly one process at a time, chosen by a lease in the room row (`driver`,
  `driver_until`); the leader is a RoomActor (play/actor.py) that keeps the room in memory. Any
  process takes over a room whose lease lapsed (its leader died) within `LEASE` + `WATCH_S`.
- Every other process forwards its players' commands to the leader's process channel and gets the
  answers back on its own: buzzer order is decided in one place, in memory, and written before it is
  told.
- Events go out once per room and process: the process channel is in the room's group (one
  subscription per room and process on Redis pub/sub), the leader serialises each event once, and the
  hub writes the same text to each of its sockets in the room. No socket has a channel of its own.
  The leader's own sockets get an event at once; a sender of the room's own takes it to the layer,
  in order, and the leader does not wait for it. A room no other process holds players of (every room,
  behind a proxy that places sockets by room) publishes nothing: see `Hub.shared`.
- Lease work is batched: one statement renews every room the process leads, one reads who is online
  in all of them, and rooms whose first players arrive together are taken in one transaction.
- Presence is a lease too: each process marks the players it holds sockets for every
  `PRESENCE_BEAT_S`, and a leader counts as offline whoever nobody marked for `PRESENCE_TTL`; a socket
  whose clean-up never ran therefore leaks nothing for long.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any, Protocol

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from . import leases
from .actor import RoomActor
from .bucket import Bucket
from .caps import SharedCaps, ip_field, session_field
from .leases import PRESENCE_TTL
from .messages import Event
from .models import Room
from .outage import log_failure
from .services import PlayError
from .writer import GroupWriter

log = logging.getLogger(__name__)
LEASE = timedelta(seconds=1.5)
RENEW_EVERY = timedelta(seconds=0.5)
# SQLite takes one writer at a time, and a writer that finds the lock taken sleeps in steps of up to
# 100 ms: a second writing thread would stall buzzes and rulings. There, lease work shares the database
# thread, and the lease is longer so that a queue of joins on that thread cannot outlast it.
SQLITE_LEASE = timedelta(seconds=4)
WATCH_S = 0.25
PRESENCE_BEAT_S = 5.0
OUTGOING_LIMIT = 1000  # events of one room waiting for the channel layer
REPLY_TIMEOUT_S = 10.0

# Lease and presence work runs on a thread of its own (but on SQLite, above), so that a queue of joins
# on the database thread cannot make a leader miss its renewal.
_lease_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="play-lease")


def _sqlite() -> bool:
    return connection.vendor == "sqlite"


def group_name(slug: str) -> str:
    return f"play.room.{slug}"


class Conn(Protocol):
    """What the hub needs of a socket (the consumer)."""

    conn_id: int
    slug: str
    player_id: int | None
    ip: str
    session_key: str

    def wants(self, term: str, seq: int) -> bool: ...

    def push(self, text: str) -> None: ...

    async def reply(self, texts: list[str], join: dict[str, Any]) -> None: ...


def _in_lease_thread(fn: Callable[..., Any], **kwargs: Any) -> Awaitable[Any]:
    if _sqlite():
        return database_sync_to_async(fn)(**kwargs)

    def call() -> Any:
        close_old_connections()
        return fn(**kwargs)

    return asyncio.get_running_loop().run_in_executor(_lease_thread, call)


class Hub:
    def __init__(self) -> None:
        self.layer = get_channel_layer()
        # The in-memory layer reaches no other process: events need not go through it at all.
        self.local_only = isinstance(self.layer, InMemoryChannelLayer)
        self.lease = SQLITE_LEASE if _sqlite() else LEASE
        self.channel = ""
        self.conns: dict[int, Conn] = {}
        self.rooms: dict[str, set[Conn]] = {}
        self.actors: dict[str, RoomActor] = {}
        self.leaders: dict[str, str] = {}  # slug -> the leader's channel, for rooms led elsewhere
        self.resolving: dict[str, asyncio.Lock] = {}
        self.per_ip: Counter[str] = Counter()
        self.per_session: Counter[str] = Counter()
        self.ip_buckets: dict[str, Bucket] = {}
        self.join_buckets: dict[str, Bucket] = {}  # kept past the address's last socket while they owe tokens
        self.tasks: list[asyncio.Task] = []
        self.outgoing: dict[str, deque[tuple[dict[str, Any], str, int]]] = {}  # events for the layer, per room
        self.senders: dict[str, asyncio.Task] = {}
        # Rooms led here whose events another process needs: one that forwarded a command (every
        # player's join on another process is one, before that player can be sent anything), or one
        # that may (taken with players online whom no socket here holds: a leader died, its room's
        # other processes still hold theirs). Only these rooms' events go through the layer, for the
        # leadership's life. The rest went to Redis and came straight back to their own process only:
        # 17% of two processes' time with every room's players on its leader's process (py-spy,
        # `ws_load.py --profile services --procs 2 --route room --cases 50x10`).
        self.shared: set[str] = set()
        self.started = asyncio.Lock()
        self.last_beat = 0.0
        self.loop: asyncio.AbstractEventLoop | None = None
        self.writer = GroupWriter()  # every room's transitions and joins, committed in batches (play/writer.py)
        self.takes = GroupWriter(thread=_on_lease_thread)  # rooms taken together (leases.rooms_take)
        self.caps: SharedCaps | None = None  # connection caps across processes (play/caps.py), with Redis

    # --- life cycle ---------------------------------------------------------------------------------

    async def start(self) -> None:
        async with self.started:
            if self.channel:
                return
            self.channel = await self.layer.new_channel()
            loop = asyncio.get_running_loop()
            if not self.local_only and settings.REDIS_URL:
                layer: dict[str, Any] = dict(settings.CHANNEL_LAYERS["default"])
                prefix = str(dict(layer.get("CONFIG") or {}).get("prefix", "thinkalike"))
                self.caps = SharedCaps(settings.REDIS_URL, prefix, self.channel)
                self.caps.start()
            self.tasks = [loop.create_task(self._receive_loop(), name="play-hub-receive"),
                          loop.create_task(self._watch_loop(), name="play-hub-watch")]

    async def close(self) -> None:
        for actor in list(self.actors.values()):
            await actor.stop()
        for task in [*self.tasks, *self.senders.values()]:
            task.cancel()
        if self.caps is not None:
            await self.caps.close()

    # --- sockets ------------------------------------------------------------------------------------

    def register(self, conn: Conn) -> str:
        """Admit a socket, or say why not: a client may hold only so many at once."""
        if self.per_ip[conn.ip] >= settings.PLAY_MAX_CONN_PER_IP:
            return "too many connections from your address"
        if conn.session_key and self.per_session[conn.session_key] >= settings.PLAY_MAX_CONN_PER_SESSION:
            return "too many connections from this browser"
        self.conns[conn.conn_id] = conn
        self.per_ip[conn.ip] += 1
        if conn.session_key:
            self.per_session[conn.session_key] += 1
        if self.caps is not None:
            self.caps.count(ip_field(conn.ip), 1)
            if conn.session_key:
                self.caps.count(session_field(conn.session_key), 1)
        return ""

    async def admit(self, conn: Conn) -> str:
        """After `register`: refuse the socket if, with the other processes' sockets of the same address
        or session, the client is over its cap (with Redis; one process has only its own)."""
        await self.start()
        if self.caps is None:
            return ""
        fields = [ip_field(conn.ip)] + ([session_field(conn.session_key)] if conn.session_key else [])
        others = await self.caps.others(fields)
        if self.per_ip[conn.ip] + others[0] > settings.PLAY_MAX_CONN_PER_IP:
            return "too many connections from your address"
        if conn.session_key and self.per_session[conn.session_key] + others[1] > settings.PLAY_MAX_CONN_PER_SESSION:
            return "too many connections from this browser"
        return ""

    def unregister(self, conn: Conn) -> None:
        """Forget a socket. Sync and safe to call twice: it runs in the consumer's `finally`, however it ended."""
        if self.conns.pop(conn.conn_id, None) is None:
            return
        self.per_ip[conn.ip] -= 1
        if self.caps is not None:
            self.caps.count(ip_field(conn.ip), -1)
            if conn.session_key:
                self.caps.count(session_field(conn.session_key), -1)
        if self.per_ip[conn.ip] <= 0:
            del self.per_ip[conn.ip]
            self.ip_buckets.pop(conn.ip, None)
            paced = self.join_buckets.get(conn.ip)
            if paced is not None and paced.full():
                del self.join_buckets[conn.ip]
        if conn.session_key:
            self.per_session[conn.session_key] -= 1
            if self.per_session[conn.session_key] <= 0:
                del self.per_session[conn.session_key]
        members = self.rooms.get(conn.slug)
        if members is not None and conn in members:
            members.discard(conn)
            loop = asyncio.get_running_loop()
            if conn.player_id is not None:
                loop.create_task(self._fire(conn.slug, "leave", {"player_id": conn.player_id}))
            if not members:
                del self.rooms[conn.slug]
                loop.create_task(self._discard_group(conn.slug))

    def allow_message(self, conn: Conn) -> bool:
        bucket = self.ip_buckets.get(conn.ip)
        if bucket is None:
            bucket = self.ip_buckets[conn.ip] = Bucket(settings.PLAY_IP_MSGS_PER_S, 2 * settings.PLAY_IP_MSGS_PER_S)
        return bucket.take()

    def join_wait(self, conn: Conn) -> float | None:
        """How long this socket's first join waits for its address's turn, or None: refused.

        Joins from one address are paced, not refused: a hall of players behind one NAT that joins or
        reconnects at once (a process died) would otherwise lose every join past the message bucket's
        burst, and those players would wait for a hello that never comes. Each socket's first join takes
        one token (`PlayConsumer.receive`); what an address owes is at most the rate times
        PLAY_JOIN_WAIT_MAX_S (`Bucket.reserve`), so the rate bounds the guest and player rows an
        address can make. With the rate at 0 first joins share the message bucket, as other messages do."""
        rate = settings.PLAY_IP_JOINS_PER_S
        if rate <= 0:
            return 0.0 if self.allow_message(conn) else None
        bucket = self.join_buckets.get(conn.ip)
        if bucket is None:
            if len(self.join_buckets) > 4096:  # addresses that owe nothing are forgotten
                self.join_buckets = {ip: b for ip, b in self.join_buckets.items() if not b.full()}
            bucket = self.join_buckets[conn.ip] = Bucket(rate, max(1.0, 2 * rate))
        return bucket.reserve(settings.PLAY_JOIN_WAIT_MAX_S)

    async def enter(self, conn: Conn) -> None:
        """Put the socket in its room's local fan-out (before its join goes out, so it misses nothing)."""
        await self.start()
        members = self.rooms.get(conn.slug)
        if members is None:
            members = self.rooms[conn.slug] = set()
            await self.layer.group_add(group_name(conn.slug), self.channel)
        members.add(conn)

    async def _discard_group(self, slug: str) -> None:
        if slug not in self.rooms:
            try:
                await self.layer.group_discard(group_name(slug), self.channel)
            except Exception:
                log.warning("could not leave the group of room %s", slug, exc_info=True)

    # --- commands -----------------------------------------------------------------------------------

    async def command(self, conn: Conn, kind: str, payload: dict[str, Any], initial: dict[str, Any] | None = None) -> None:
        """Run a player's command at the room's leader; its answer reaches `conn.reply`."""
        actor, leader = await self._leader(conn.slug, initial)
        if actor is not None:
            await actor.handle(kind, payload, conn.reply)
            return
        await self.layer.send(leader, {"type": "play.command", "slug": conn.slug, "kind": kind, "payload": payload,
                                       "conn": conn.conn_id, "reply_to": self.channel})

    async def _fire(self, slug: str, kind: str, payload: dict[str, Any]) -> None:
        """A command nobody waits for (a leave)."""
        try:
            actor = self.actors.get(slug)
            if actor is not None:
                await actor.handle(kind, payload, _no_reply)
            elif slug in self.leaders:
                await self.layer.send(self.leaders[slug], {"type": "play.command", "slug": slug, "kind": kind,
                                                           "payload": payload, "conn": 0, "reply_to": ""})
        except Exception:
            log.warning("room %s: %s was not delivered", slug, kind, exc_info=True)

    async def _leader(self, slug: str, initial: dict[str, Any] | None) -> tuple[RoomActor | None, str]:
        actor = self.actors.get(slug)
        if actor is not None:
            return actor, self.channel
        if slug in self.leaders:
            return None, self.leaders[slug]
        lock = self.resolving.setdefault(slug, asyncio.Lock())
        async with lock:
            if slug in self.actors:
                return self.actors[slug], self.channel
            if slug in self.leaders:
                return None, self.leaders[slug]
            taken = await self.takes.run_grouped(self._take_many, (slug, initial or {}))
            now = timezone.now()
            if slug in self.actors:  # the watch loop took the room meanwhile
                return self.actors[slug], self.channel
            if taken is None:
                driver, _ = await _in_lease_thread(leases.room_leader, slug=slug)
                if not driver:
                    raise PlayError("busy", "the room is changing servers; try again")
                self.leaders[slug] = driver
                return None, driver
            return self._lead(taken, now), self.channel

    def _take_many(self, *, items: list[tuple[str, dict[str, Any]]]) -> list[tuple | PlayError | None]:
        """The rooms whose first players arrive together, taken in one batch on the lease thread."""
        return _take_many(requests=items, driver=self.channel, now=timezone.now(), lease=self.lease)

    def _lead(self, taken: tuple[Room, dict, set, dict], now: datetime) -> RoomActor:
        room, players, online, agents = taken
        actor = RoomActor(self, room, players, online, agents, now)
        self.actors[room.slug] = actor
        self.leaders.pop(room.slug, None)
        held_here = {c.player_id for c in self.rooms.get(room.slug, ()) if c.player_id is not None}
        if online - held_here:
            self.shared.add(room.slug)
        return actor

    def actor_stopped(self, actor: RoomActor) -> None:
        if self.actors.get(actor.slug) is actor:
            del self.actors[actor.slug]
            self.shared.discard(actor.slug)

    # --- events -------------------------------------------------------------------------------------

    async def publish(self, slug: str, term: str, seq: int, texts: list[str]) -> None:
        """The leader's events: to this process's sockets at once, to the other processes through the
        layer by the room's own sender, in order. The leader does not wait for that send: it held the
        room's lock over a Redis round trip for every word, and a buzz or an answer waited behind them
        (an answer's ruling 110 ms after it arrived, its write 42 ms of it, in `benchmarks/ws_load.py
        --profile services --cases 50x10`)."""
        if self.local_only or slug not in self.shared:
            await self._fan_out(slug, term, seq, texts)
            return
        # The room's sender is woken before this process's own sockets: it publishes the moment this task
        # yields, ahead of the socket writes the fan-out wakes, so the other processes write theirs while
        # this one writes its own (a room of 500 over two processes: the other half waited for 250 writes).
        queue = self.outgoing.setdefault(slug, deque(maxlen=OUTGOING_LIMIT))
        if len(queue) == OUTGOING_LIMIT:  # the layer is stuck: clients elsewhere catch up with `sync`
            log.warning("room %s: the channel layer is behind; events %s/%s dropped", slug, *queue[0][1:3])
        queue.append(({"type": "play.event", "slug": slug, "term": term, "seq": seq, "texts": texts,
                       "origin": self.channel}, term, seq))
        sender = self.senders.get(slug)
        if sender is None or sender.done():
            self.senders[slug] = asyncio.get_running_loop().create_task(self._send_events(slug), name="play-events")
        await self._fan_out(slug, term, seq, texts)

    async def _send_events(self, slug: str) -> None:
        """What queued while a send was on its way goes as one message: a layer slower than the room's
        events costs fewer round trips instead of a growing queue."""
        queue = self.outgoing[slug]
        while queue:
            batch = [queue.popleft() for _ in range(len(queue))]
            message = batch[0][0] if len(batch) == 1 else {"type": "play.events", "origin": self.channel,
                                                           "events": [m for m, _, _ in batch]}
            try:
                await self.layer.group_send(group_name(slug), message)
            except Exception:  # the layer is down (Redis restarting): clients catch up with `sync`
                log.warning("room %s: events %s/%s-%s not published", slug, batch[0][1], batch[0][2], batch[-1][2],
                            exc_info=True)
        del self.outgoing[slug]

    async def _fan_out(self, slug: str, term: str, seq: int, texts: list[str]) -> None:
        # Into each socket's outbox, which never waits (a socket's own task writes it out): a client
        # that stops reading holds up nobody else. Each text to every socket before the next text.
        conns = [c for c in self.rooms.get(slug, ()) if c.wants(term, seq)]
        for text in texts:
            for conn in conns:
                conn.push(text)

    async def _receive_loop(self) -> None:
        while True:
            try:
                message = await self.layer.receive(self.channel)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("play hub: channel layer receive failed; retrying", exc_info=True)
                await asyncio.sleep(0.5)
                continue
            try:
                await self._dispatch(message)
            except Exception:
                log.exception("play hub: could not handle %s", message.get("type"))

    async def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind in ("play.event", "play.events"):
            if message.get("origin") != self.channel:  # our own events went out when published
                for event in message.get("events") or [message]:
                    await self._fan_out(event["slug"], event["term"], event["seq"], event["texts"])
        elif kind == "play.reply":
            conn = self.conns.get(message["conn"])
            join = message.get("join") or {}
            if conn is not None:
                if join.get("moved"):
                    self.forget_leader(conn.slug)
                await conn.reply(message["texts"], join)
        elif kind == "play.command":
            asyncio.get_running_loop().create_task(self._remote_command(message))

    async def _remote_command(self, message: dict[str, Any]) -> None:
        reply_to, conn_id = message["reply_to"], message["conn"]

        async def reply(texts: list[str], join: dict[str, Any]) -> None:
            if reply_to:
                await self.layer.send(reply_to, {"type": "play.reply", "conn": conn_id, "texts": texts, "join": join})

        actor = self.actors.get(message["slug"])
        resolving = self.resolving.get(message["slug"])
        if actor is None and resolving is not None and resolving.locked():
            async with resolving:  # we are taking the room right now: the sender found our lease first
                actor = self.actors.get(message["slug"])
        if actor is None:  # we lost the room: the sender must look the leader up again
            await reply([_error_text("busy", "the room moved to another server; try again")], {"moved": True})
            return
        if reply_to:  # a player's command on another process (a reload from a web request has none)
            self.shared.add(actor.slug)  # before the command runs: its player hears every event after it
        await actor.inbox_run(message["kind"], message["payload"], reply)

    def forget_leader(self, slug: str) -> None:
        self.leaders.pop(slug, None)

    # --- leases and presence ------------------------------------------------------------------------

    async def _watch_loop(self) -> None:
        while True:
            await asyncio.sleep(WATCH_S)
            try:
                await self._watch()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # every pass while an outage lasts: said once in a while
                log_failure(log, "play hub lease pass", exc, "play hub: lease pass failed", level=logging.WARNING)

    async def _watch(self) -> None:
        now = timezone.now()
        for actor in list(self.actors.values()):
            if actor.idle(now):
                await actor.stop()
        renew = [a for a in self.actors.values() if a.lease_until - now < self.lease - RENEW_EVERY]
        wanted = [slug for slug in self.rooms if slug not in self.actors]
        beat = time.monotonic() - self.last_beat >= PRESENCE_BEAT_S
        seen = sorted({c.player_id for c in self.conns.values() if c.player_id is not None}) if beat else []
        led = list(self.actors.values()) if beat else []
        if not (renew or wanted or beat):
            return
        if beat:
            self.last_beat = time.monotonic()
        result = await _in_lease_thread(
            _lease_pass, driver=self.channel, renew=[a.room for a in renew], wanted=wanted, seen=seen,
            led=[a.room for a in led], now=now, lease=self.lease,
        )
        for actor in renew:
            renewed = result["renewed"].get(actor.slug)
            if renewed:
                actor.lease_until = now + self.lease
            elif renewed is None:  # its row was busy in our own commit: the next pass renews it
                continue
            else:
                log.warning("room %s: lease lost to another process", actor.slug)
                await actor.stop(release=False)
        for actor in led:
            if actor.slug in result["online"]:
                actor.refresh_online(result["online"][actor.slug], now)
        for slug, driver in result["leaders"].items():
            self.leaders[slug] = driver
        for slug, taken in result["taken"].items():
            if slug in self.actors:
                continue
            log.info("room %s: taking over the lead", slug)
            actor = self._lead(taken, now)
            actor.poke.set()


def _on_lease_thread(apply: Callable[..., Any], batch: list[Any]) -> Awaitable[Any]:
    return _in_lease_thread(apply, batch=batch)


def _take_many(*, requests: list[tuple[str, dict[str, Any]]], driver: str, now: datetime,
               lease: timedelta, create: bool = True) -> list[tuple | PlayError | None]:
    """Take these rooms (leases.rooms_take) and load the players of those taken, in a few queries."""
    rooms = leases.rooms_take(requests=requests, driver=driver, now=now, lease=lease, create=create)
    loaded = leases.players_load_many(rooms=[r for r in rooms if isinstance(r, Room)], online_since=now - PRESENCE_TTL)
    return [(r, *loaded[r.pk]) if isinstance(r, Room) else r for r in rooms]


def _lease_pass(*, driver: str, renew: list[Room], wanted: list[str], seen: list[int], led: list[Room],
                now: datetime, lease: timedelta) -> dict[str, Any]:
    """One round trip of lease work: renew ours, look up (or take over) the rooms led elsewhere, mark
    presence, and read who is online in the rooms we lead.

    On SQLite, where it shares the database thread with the group commit, it is one transaction (one
    commit for every room). Elsewhere each statement commits alone: this thread runs beside the group
    commit, and one transaction holding every led room's row would deadlock with a batch that writes
    them in another order."""
    if not _sqlite():
        return _lease_work(driver=driver, renew=renew, wanted=wanted, seen=seen, led=led, now=now, lease=lease)
    with transaction.atomic():
        return _lease_work(driver=driver, renew=renew, wanted=wanted, seen=seen, led=led, now=now, lease=lease)


def _lease_work(*, driver: str, renew: list[Room], wanted: list[str], seen: list[int], led: list[Room],
                now: datetime, lease: timedelta) -> dict[str, Any]:
    renewed = leases.rooms_renew(rooms=renew, driver=driver, now=now, lease=lease)
    leaders: dict[str, str] = {}
    lapsed: list[str] = []
    for slug in wanted:
        leader, until = leases.room_leader(slug=slug)
        if leader and leader != driver and until is not None and until > now:
            leaders[slug] = leader
        else:
            lapsed.append(slug)
    # Only rooms that exist: a room whose first player is still on the way is made by that player's
    # join, with the settings of its link. Made here first, it had none (the default pace, not the
    # link's), whenever this pass fell between a first player's entering and its join (seen under load).
    got = (_take_many(requests=[(slug, {}) for slug in lapsed], driver=driver, now=now, lease=lease, create=False)
           if lapsed else [])
    # No settings are given, so none is refused: a result is the room taken, or None.
    taken: dict[str, tuple] = {slug: g for slug, g in zip(lapsed, got, strict=True) if isinstance(g, tuple)}
    leases.players_seen(player_ids=seen, now=now)
    online = leases.players_online_in(rooms=led, since=now - PRESENCE_TTL)
    return {"renewed": renewed, "leaders": leaders, "taken": taken, "online": online}


def rooms_players_reload(*, room_ids: list[int]) -> None:
    """Tell the leaders of these rooms to read their players again (call it after the commit that moved
    them: an account merging a guest's history). A room nobody leads reads them when it is next taken."""
    layer = get_channel_layer()
    for slug, driver in Room.objects.filter(pk__in=room_ids).exclude(driver="").values_list("slug", "driver"):
        try:
            async_to_sync(layer.send)(driver, {"type": "play.command", "slug": slug, "kind": "players_reload",
                                               "payload": {}, "conn": 0, "reply_to": ""})
        except Exception:  # the layer is down: the room shows the guest's line until its leader changes
            log.warning("room %s: its leader was not told to reload its players", slug, exc_info=True)


def _error_text(code: str, message: str) -> str:
    return json.dumps({"type": "error", "code": code, "message": message})


async def _no_reply(texts: list[str], join: dict[str, Any]) -> None:
    return None


_hubs: dict[int, Hub] = {}


def get_hub() -> Hub:
    """The hub of the running event loop (one per process in production; one per test's loop in tests)."""
    loop = asyncio.get_running_loop()
    hub = _hubs.get(id(loop))
    if hub is None or hub.loop is not loop:
        hub = Hub()
        hub.loop = loop
        _hubs.clear()  # a new loop (a new test) starts afresh; the old loop's tasks died with it
        _hubs[id(loop)] = hub
    return hub


def reset() -> None:
    _hubs.clear()


__all__ = ["Conn", "Event", "Hub", "get_hub", "group_name", "reset", "rooms_players_reload"]
