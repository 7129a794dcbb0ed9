"""The play-room websocket: admit, parse, rate-limit, hand commands to the hub, write what comes back.

No game logic here, and no channel of its own: room events reach the socket through its process's
hub (play/hub.py). Messages are rate-limited as they arrive and queued for one worker per socket, so a
slow command never delays reading the next frame, and the clean-up runs in `__call__`'s `finally`,
whether the socket closed, the consumer crashed or the server killed it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import time
from collections import deque
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qsl

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from django.contrib import auth

from quizsite.agents.services import agent_get_or_create_for_user, new_guest_key
from quizsite.core.wsserver import SERVER_SEND

from . import bots, services
from .bucket import Bucket
from .hub import get_hub
from .names import BadName, name_clean
from .outage import db_unreachable, unavailable, warn_unreachable
from .services import PlayError, text_storable

log = logging.getLogger(__name__)
MAX_FRAME = 4096
MAX_ANSWER, MAX_CHAT = 200, 500
BUCKET_SIZE, REFILL_PER_S = 20.0, 8.0
FLOOD_CLOSE_AFTER, FLOOD_WINDOW_S = 40, 10.0  # this many refused-for-speed messages within the window close the socket
QUEUE_LIMIT = 16  # commands waiting for the socket's worker
# Texts waiting for a socket whose client is not reading (the server's send waits while the socket's
# buffers are full); past this the socket is closed, so one stalled client costs a bounded amount of
# memory and never holds up the room. A reading client's outbox is empty between words.
OUTBOX_LIMIT = 512
JOIN_ATTEMPT_S, JOIN_TRIES = 1.0, 10
CLOSE_TOO_MANY, CLOSE_FLOOD, CLOSE_SLOW = 4029, 4008, 4009
COMMANDS = {"next", "buzz", "answer", "chat", "report", "settings", "sync", "pause", "history"}
_ids = itertools.count(1)


def _text(message: dict[str, Any], key: str, limit: int) -> str:
    """A client's free text: a string, at most `limit` characters, nothing a database cannot store (no
    NUL, no lone surrogate): refused here, it costs the sender one error and nobody else anything."""
    text = message.get(key, "")
    if not isinstance(text, str) or not text_storable(text):
        raise PlayError("bad_message", f"{key} must be valid text, without NUL characters or lone surrogates")
    if len(text) > limit:
        raise PlayError("too_long", f"{key} is limited to {limit} characters")
    return text


def _parse(text_data: str | None) -> dict[str, Any]:
    if text_data is None:
        raise PlayError("bad_json", "send JSON text frames")
    if len(text_data) > MAX_FRAME:
        raise PlayError("too_long", f"messages are limited to {MAX_FRAME} characters")
    try:
        message = json.loads(text_data)
    except (ValueError, RecursionError):  # deep nesting fits in a small frame and overflows the parser
        raise PlayError("bad_json", "message is not valid JSON (or nests too deeply)") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise PlayError("bad_message", "a message is a JSON object with a string 'type'")
    return message


class PlayConsumer(AsyncWebsocketConsumer):
    channel_layer_alias = "play-sockets-have-no-channel"  # not a configured layer: the hub fans out

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.conn_id = next(_ids)
        self.hub = get_hub()
        self.worker: asyncio.Task | None = None
        self.sender: asyncio.Task | None = None
        self.outbox: deque[str | int] = deque()  # texts, and a close code last
        self.outbox_ready = asyncio.Event()
        self.stalled = False
        self.closer: asyncio.Task | None = None
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.hub.unregister(self)
            # Dropped, then cancelled: a cancelled task keeps its CancelledError, whose traceback holds
            # the task's frame and so this consumer; while the consumer held the task too, every closed
            # socket left that cycle (its transport, protocol and queues with it: about 90 objects) for
            # the cyclic collector, whose full passes then stalled every room's clock (gc.callbacks).
            tasks, self.worker, self.sender, self.closer = (self.worker, self.sender, self.closer), None, None, None
            for task in tasks:
                if task is not None:
                    task.cancel()

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels closes stale database connections before every message, a trip to the database
        # thread per frame; the services' own database calls already do that, so frames skip it.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"no handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        self.slug = self.scope["url_route"]["kwargs"]["room"]
        self.player_id: int | None = None
        self.term, self.seq = "", 0
        self.joining: asyncio.Future | None = None
        client = self.scope.get("client") or ("", 0)
        self.ip = str(client[0])
        session = self.scope.get("session")
        self.session_key = (session.session_key or "") if session is not None else ""
        self.bucket = Bucket(REFILL_PER_S, BUCKET_SIZE)
        self.refused: deque[float] = deque()
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=QUEUE_LIMIT)
        self.join_due: float | None = None  # when the first join may run (hub.join_wait), once it has a turn
        await self.accept()
        self.sender = asyncio.get_running_loop().create_task(self._send_loop())
        refusal = self.hub.register(self) or await self.hub.admit(self)
        if refusal:
            self._error("too_many_connections", refusal)
            self.push_close(CLOSE_TOO_MANY)
            return
        self.worker = asyncio.get_running_loop().create_task(self._work())

    async def disconnect(self, code: int) -> None:
        self.hub.unregister(self)

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        # Channels' own also closes stale database connections: a trip to a database thread for every
        # socket that closes (8% of the main thread while 500 players left a room, py-spy). This one
        # touches no database, and is in no group (the hub fans out).
        await self.disconnect(message.get("code", 1000))
        raise StopConsumer()

    # --- inbound: measured on arrival, run in order by the worker ----------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.worker is None:  # refused on connect (a cap): it is closing, and nothing it sends is run
            return
        if not self.bucket.take() or self.inbox.full():
            self._too_fast()
            return
        try:
            message = _parse(text_data)
            kind = message["type"]
            if kind != "join" and kind not in COMMANDS:
                raise PlayError("unknown_type", f"unknown message type {kind[:40]!r}")
            if kind == "join" and self.join_due is None:  # the socket's first join waits its address's turn
                wait = self.hub.join_wait(self)
                if wait is None:
                    raise PlayError("too_fast", "too many players are joining from your address; try again shortly")
                self.join_due = time.monotonic() + wait
            elif not self.hub.allow_message(self):
                self._too_fast()
                return
            self.inbox.put_nowait(message)
        except PlayError as exc:
            self.push(json.dumps(exc.as_event()))
        except asyncio.QueueFull:
            self._too_fast()

    def _too_fast(self) -> None:
        if not self._flooding():
            self._error("too_fast", "slow down")

    def _flooding(self) -> bool:
        """Count one refusal for speed (here or at the room's leader); past the limit, close the socket."""
        now = time.monotonic()
        self.refused.append(now)
        while self.refused and self.refused[0] < now - FLOOD_WINDOW_S:
            self.refused.popleft()
        if len(self.refused) >= FLOOD_CLOSE_AFTER:
            self.push_close(CLOSE_FLOOD)
            return True
        return False

    async def _work(self) -> None:
        while True:
            message = await self.inbox.get()
            try:
                if message["type"] == "join":
                    if self.join_due is not None and self.join_due > time.monotonic():
                        await asyncio.sleep(self.join_due - time.monotonic())
                    await self._join(message)
                elif self.player_id is None:
                    raise PlayError("not_joined", "send 'join' first")
                else:
                    await self.hub.command(self, message["type"], self._payload(message))
            except PlayError as exc:
                self.push(json.dumps(exc.as_event()))
            except Exception as exc:  # a bug must cost one message, never the socket and its clean-up
                if db_unreachable(exc):  # an outage, not a bug: the player may try again, the log hears it once
                    warn_unreachable(log, f"play {message['type']}", exc)
                    self.push(json.dumps(unavailable().as_event()))
                    continue
                log.exception("play message failed in room %s: %.200s", self.slug, message)
                self._error("server_error", "the server could not handle that message")

    def _payload(self, message: dict[str, Any]) -> dict[str, Any]:
        kind = message["type"]
        payload: dict[str, Any] = {"player_id": self.player_id}
        if kind in ("next", "buzz", "answer", "report", "sync"):
            payload["qid"] = str(message.get("qid") or "")[:32]
            if not text_storable(payload["qid"]):  # a report looks it up in the database, which cannot take it
                raise PlayError("bad_message", "qid must be valid text, without NUL characters or lone surrogates")
        if kind == "answer":
            payload["text"] = _text(message, "text", MAX_ANSWER)
        elif kind == "chat":
            payload["text"] = _text(message, "text", MAX_CHAT)
        elif kind == "report":
            payload["comment"] = _text(message, "comment", MAX_CHAT)
        elif kind == "sync":
            payload["have"] = message.get("have", 0)
        elif kind == "settings":
            payload["changes"] = {k: v for k, v in message.items() if k != "type"}
        elif kind == "pause":
            if not isinstance(message.get("paused"), bool):
                raise PlayError("bad_message", "pause needs paused: true or false")
            payload["paused"] = message["paused"]
        return payload

    async def _join(self, message: dict[str, Any]) -> None:
        if self.player_id is not None or self.joining is not None:
            raise PlayError("already_joined", "already joined")
        try:
            name = name_clean(message.get("name"))
        except BadName as exc:
            raise PlayError("bad_name", str(exc)) from None
        query = dict(parse_qsl(self.scope.get("query_string", b"").decode("latin-1")))
        initial = services.settings_clean(query, check_set=False) if query else {}
        join: dict[str, Any] = {"name": name}
        if "bot" in message:  # only the server mints bot tokens (play/bots.py); a browser's claim is refused
            claim = await database_sync_to_async(bots.bot_token_check)(token=message["bot"], room=self.slug)
            join.update(agent_id=claim.agent_id, bot=claim.name)
        else:
            join.update(await self._identity(name))
        await self.hub.enter(self)
        # A room changing leaders answers "moved", and a leader that died answers nothing: ask again
        # until its lease lapses and a live process (maybe this one) leads the room.
        for _ in range(JOIN_TRIES):
            self.joining = asyncio.get_running_loop().create_future()
            try:
                await self.hub.command(self, "join", join, initial=initial)
            except Exception:  # not joined (the database out, say): the player may send `join` again
                self.joining = None
                raise
            try:
                outcome = await asyncio.wait_for(asyncio.shield(self.joining), timeout=JOIN_ATTEMPT_S)
            except TimeoutError:
                outcome = "moved"
                self.hub.forget_leader(self.slug)
            if outcome != "moved":
                return
            await asyncio.sleep(0.05)
        self.joining = None
        raise PlayError("busy", "the room did not answer; try joining again")

    # --- outbound ---------------------------------------------------------------------------------

    def wants(self, term: str, seq: int) -> bool:
        """Room events reach joined sockets only, and not those that the hello already covered."""
        return self.player_id is not None and not (term == self.term and seq <= self.seq)

    def push(self, text: str) -> None:
        """Queue a text for this socket without waiting. Everything a socket is sent goes through its
        outbox, in order, written out by the socket's own task: the hub hands every socket of a room
        the same text in one loop, and a client that does not read must hold up nobody after it."""
        if self.stalled:
            return
        self.outbox.append(text)
        if len(self.outbox) > OUTBOX_LIMIT:
            self.stalled = True
            self.outbox.clear()
            log.info("room %s: closing a socket that read nothing of %d messages", self.slug, OUTBOX_LIMIT)
            # Not queued: the send loop is stuck behind the full socket (the server drops it: core/wsprotocol.py).
            self.closer = asyncio.get_running_loop().create_task(self.close(code=CLOSE_SLOW))
        self.outbox_ready.set()

    def push_close(self, code: int) -> None:
        """Close the socket once what is queued before it has been written."""
        if not self.stalled:
            self.outbox.append(code)
            self.outbox_ready.set()

    async def _send_loop(self) -> None:
        # The server's own send when the app is served through quizsite.asgi (core/wsserver.py), else
        # the consumer's (tests drive the bare stack): texts need nothing of the middleware on the way.
        raw = self.scope.get(SERVER_SEND)
        try:
            while True:
                await self.outbox_ready.wait()
                self.outbox_ready.clear()
                while self.outbox:
                    item = self.outbox.popleft()
                    if isinstance(item, int):
                        self.stalled = True  # nothing more after a close
                        await self.close(code=item)
                        return
                    if raw is not None:
                        await raw({"type": "websocket.send", "text": item})
                    else:
                        await self.send(text_data=item)
        except OSError:  # the client went away mid-send; __call__'s clean-up runs
            return

    async def reply(self, texts: list[str], join: dict[str, Any]) -> None:
        if join.get("refused"):  # the leader refused a command for speed (the room's or the player's chat share)
            if not self._flooding():
                for text in texts:
                    self.push(text)
            return
        if join.get("player_id"):
            self.player_id, self.term, self.seq = join["player_id"], join["term"], join["seq"]
        if not (join.get("moved") and self.joining is not None):  # a join that met a move is retried quietly
            for text in texts:
                self.push(text)
        if self.joining is not None and not self.joining.done() and join:
            self.joining.set_result("moved" if join.get("moved") else "done")
            if not join.get("player_id"):  # refused or moved: the player may try again
                self.joining = None

    def _error(self, code: str, message: str) -> None:
        self.push(json.dumps({"type": "error", "code": code, "message": message}))

    async def _identity(self, name: str) -> dict[str, Any]:
        """Who is joining: a user's agent, or a guest's key. Guests are made on join, never on connect,
        by the leader in the same write as the join (play/actor.py), so a crowd's guests and players
        are made together. The user is read here, not on connect (play/routing.py): one trip to the
        database thread for a browser's session, user and agent, none for a cookieless socket."""
        session = self.scope.get("session")
        if session is not None and session.session_key:  # a browser: its user, or its guest key, is in its session
            return await self.hub.writer.run(_session_identity, session=session, name=name)
        return {"guest_key": new_guest_key()}  # a cookieless socket could never carry a key back: a new guest


def _session_identity(*, session: Any, name: str) -> dict[str, Any]:
    """The signed-in user's agent (Django's own session check: a session whose password hash no longer
    matches is signed out), else the session's guest key, made and saved on first use."""
    user = auth.get_user(SimpleNamespace(session=session))  # type: ignore[arg-type]  # it reads only .session
    if user.is_authenticated:
        return {"agent_id": agent_get_or_create_for_user(user=user, name=name).pk}
    key = session.get("guest_key")
    if not key:
        key = session["guest_key"] = new_guest_key()
        session.save()
    return {"guest_key": str(key)}


class NoRouteConsumer(AsyncWebsocketConsumer):
    """Any other websocket path: refused cleanly (close 4404), no traceback in the server's log."""

    channel_layer_alias = "play-sockets-have-no-channel"

    async def connect(self) -> None:
        await self.close(code=4404)
