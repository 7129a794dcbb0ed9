"""The play-room websocket: parse, rate-limit, call services, send what they return. No game logic here."""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from typing import Any
from urllib.parse import parse_qsl

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.utils import timezone

from quizsite.agents.models import Agent
from quizsite.agents.services import agent_get_or_create_for_user, agent_get_or_create_guest, new_guest_key

from . import driver, services
from .services import PlayError

log = logging.getLogger(__name__)
MAX_FRAME = 4096
MAX_ANSWER, MAX_CHAT = 200, 500
BUCKET_SIZE, REFILL_PER_S = 20.0, 8.0
FLOOD_CLOSE_AFTER, FLOOD_WINDOW_S = 40, 10.0  # this many refused-for-speed messages within the window close the socket
STATE_EVENTS = {"tossup", "buzz", "ruling", "settings", "tossup_end"}


def _text(message: dict[str, Any], key: str, limit: int) -> str:
    """A client's free text: a string, at most `limit` characters, no NUL (databases refuse it)."""
    text = message.get(key, "")
    if not isinstance(text, str) or "\x00" in text:
        raise PlayError("bad_message", f"{key} must be a string without NUL characters")
    if len(text) > limit:
        raise PlayError("too_long", f"{key} is limited to {limit} characters")
    return text


class PlayConsumer(AsyncWebsocketConsumer):
    slug: str
    player_id: int | None

    async def connect(self) -> None:
        self.slug = self.scope["url_route"]["kwargs"]["room"]
        self.player_id = None
        self.tokens, self.refilled_at = BUCKET_SIZE, time.monotonic()
        self.refused: deque[float] = deque()
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.player_id is None:
            return
        await self.channel_layer.group_discard(driver.group_name(self.slug), self.channel_name)
        driver.detach(self.slug)
        outcome = await database_sync_to_async(services.room_leave)(slug=self.slug, player_id=self.player_id)
        await driver.broadcast(self.slug, outcome.events)

    # --- inbound -----------------------------------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if not self._take_token():
            now = time.monotonic()
            self.refused.append(now)
            while self.refused and self.refused[0] < now - FLOOD_WINDOW_S:
                self.refused.popleft()
            if len(self.refused) >= FLOOD_CLOSE_AFTER:
                await self.close(code=4008)
                return
            await self._error("too_fast", "slow down")
            return
        if text_data is None:
            await self._error("bad_json", "send JSON text frames")
            return
        if len(text_data) > MAX_FRAME:
            await self._error("too_long", f"messages are limited to {MAX_FRAME} characters")
            return
        try:
            message = json.loads(text_data)
        except ValueError:
            await self._error("bad_json", "message is not valid JSON")
            return
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            await self._error("bad_message", "a message is a JSON object with a string 'type'")
            return
        handler = getattr(self, f"on_{message['type']}", None)
        if handler is None:
            await self._error("unknown_type", f"unknown message type {message['type']!r}")
            return
        if self.player_id is None and message["type"] != "join":
            await self._error("not_joined", "send 'join' first")
            return
        try:
            await handler(message)
        except PlayError as exc:
            await self.send_json(exc.as_event())
        except Exception:  # a bug must cost one message, never the socket and its clean-up
            log.exception("play message failed in room %s: %.200s", self.slug, text_data)
            await self._error("server_error", "the server could not handle that message")

    async def on_join(self, message: dict[str, Any]) -> None:
        if self.player_id is not None:
            raise PlayError("already_joined", "already joined")
        name = message.get("name")
        if not isinstance(name, str) or not 1 <= len(name.strip()) <= 40 or "\x00" in name:
            raise PlayError("bad_name", "name must be 1 to 40 characters")
        query = dict(parse_qsl(self.scope.get("query_string", b"").decode("latin-1")))
        initial = await database_sync_to_async(services.settings_clean)(query) if query else {}
        agent = await self._agent(name)
        player, outcome = await database_sync_to_async(services.room_join)(
            slug=self.slug, agent=agent, name=name, initial_settings=initial, now=timezone.now()
        )
        self.player_id = player.pk
        await self.channel_layer.group_add(driver.group_name(self.slug), self.channel_name)
        driver.attach(self.slug)
        await self._deliver(outcome)

    async def on_next(self, message: dict[str, Any]) -> None:
        await self._call(services.room_next, qid=str(message.get("qid") or ""), now=timezone.now())

    async def on_buzz(self, message: dict[str, Any]) -> None:
        await self._call(services.room_buzz, qid=str(message.get("qid", "")), now=timezone.now())

    async def on_answer(self, message: dict[str, Any]) -> None:
        text = _text(message, "text", MAX_ANSWER)
        await self._call(services.room_answer, qid=str(message.get("qid", "")), text=text, now=timezone.now())

    async def on_chat(self, message: dict[str, Any]) -> None:
        await self._call(services.room_chat, text=_text(message, "text", MAX_CHAT))

    async def on_report(self, message: dict[str, Any]) -> None:
        comment = _text(message, "comment", MAX_CHAT)
        await self._call(services.room_report, qid=str(message.get("qid", "")), comment=comment)

    async def on_settings(self, message: dict[str, Any]) -> None:
        changes = {k: v for k, v in message.items() if k != "type"}
        await self._call(services.room_update_settings, changes=changes)

    # --- outbound ----------------------------------------------------------------------------------

    async def room_event(self, message: dict[str, Any]) -> None:
        """A room event from the group (any process); forward it and wake the local clock if state moved."""
        event = message["event"]
        if event.get("type") in STATE_EVENTS:
            driver.poke(self.slug)
        await self.send_json(event)

    async def send_json(self, payload: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(payload, ensure_ascii=False))

    # --- helpers -----------------------------------------------------------------------------------

    async def _call(self, service: Any, **kwargs: Any) -> None:
        outcome = await database_sync_to_async(service)(slug=self.slug, player_id=self.player_id, **kwargs)
        await self._deliver(outcome)

    async def _deliver(self, outcome: services.Outcome) -> None:
        for reply in outcome.reply:
            await self.send_json(reply)
        await driver.broadcast(self.slug, outcome.events)

    async def _error(self, code: str, message: str) -> None:
        await self.send_json({"type": "error", "code": code, "message": message})

    def _take_token(self) -> bool:
        now = time.monotonic()
        self.tokens = min(BUCKET_SIZE, self.tokens + (now - self.refilled_at) * REFILL_PER_S)
        self.refilled_at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True

    @database_sync_to_async
    def _agent(self, name: str) -> Agent:
        user = self.scope.get("user")
        if user is not None and user.is_authenticated:
            return agent_get_or_create_for_user(user=user, name=name)
        session = self.scope.get("session")
        key = session.get("guest_key") if session is not None else None
        if not key:
            key = new_guest_key()
            if session is not None:
                session["guest_key"] = key
                session.save()
        return agent_get_or_create_guest(guest_key=key, name=name)
