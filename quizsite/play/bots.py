"""Bots in play rooms, server side: the token that proves a socket is a bot, and starting a bot client
(play/botclient.py) when a room needs one. Which agents may play, and the `bots` setting: bot_catalog.py.

Why this shape: a bot is a player like any other, on a websocket of its own, so its buzzes go through
the leader's buzzer order and land as live responses with the same timing fields as a person's. The
server mints a signed token when it starts a bot; a join that carries one is the bot's Agent, and a
join without one is never a bot, so a browser cannot claim a bot's place. Bots run outside the ASGI
processes (a Celery worker on the `bots` queue by default), connecting to `PLAY_BOT_WS_BASE`: model
calls never stall a room's clock, and any ASGI process, leader or not, may start one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.core import signing

from quizsite.agents.models import Agent

from .bot_catalog import Bot, bot_resolve
from .botclient import BotClient, BotConfig
from .models import Room
from .services import PlayError

log = logging.getLogger(__name__)
SALT = "thinkalike.play.bot"
BOT_TASK = "play.bot_run"  # the Celery task (play/tasks.py), enqueued by name
RELAUNCH_AFTER_S = 30.0  # a bot started this recently is not started again (it may still be connecting)
# Tasks of this process's loop (launches; PLAY_BOT_LAUNCHER=inline bots), kept referenced until they end.
_tasks: set[asyncio.Task] = set()


@dataclass(frozen=True)
class Claim:
    agent_id: int
    name: str


# --- the token -----------------------------------------------------------------------------------------


def bot_token(*, room: str, agent_id: int, name: str, listed: bool = True, key: str | None = None) -> str:
    """Signed with the server's SECRET_KEY: only the server (or its operator's shell) can mint one.
    `listed` bots must be in the room's `bots` setting to join; a shell's ad-hoc bot need not be."""
    return signing.dumps(
        {"room": room, "agent": agent_id, "name": name, "listed": listed}, salt=SALT, key=key
    )


def bot_token_check(*, token: Any, room: str) -> Claim:
    """The join of a socket that says it is a bot: refused unless the token is ours, for this room, and
    (for listed bots) the bot is still among the room's bots."""
    if not isinstance(token, str) or not token or len(token) > 1000:
        raise PlayError("bad_bot", "bot token refused: it must be the token the server issued")
    try:
        claim = signing.loads(token, salt=SALT, max_age=settings.PLAY_BOT_TOKEN_MAX_AGE_S)
    except signing.SignatureExpired:
        raise PlayError("bad_bot", "bot token refused: it has expired") from None
    except signing.BadSignature:
        raise PlayError("bad_bot", "bot token refused: bad signature (only the server starts bots)") from None
    if not isinstance(claim, dict) or claim.get("room") != room:
        raise PlayError("bad_bot", "bot token refused: it is for another room")
    agent = claim.get("agent")
    if not isinstance(agent, int) or not Agent.objects.filter(pk=agent, kind=Agent.Kind.AI).exists():
        raise PlayError("bad_bot", "bot token refused: its agent is not an AI agent")
    if claim.get("listed", True):
        row = Room.objects.filter(slug=room).values_list("settings", flat=True).first() or {}
        if claim.get("name") not in (row.get("bots") or []):
            raise PlayError("bad_bot", "bot token refused: this bot is not among the room's bots (removed?)")
    return Claim(agent_id=int(claim["agent"]), name=str(claim["name"]))


# --- starting bots -------------------------------------------------------------------------------------


def bot_ws_url(*, room: str, base: str | None = None) -> str:
    return f"{(base or settings.PLAY_BOT_WS_BASE).rstrip('/')}/ws/play/{room}/"


async def bot_launch(*, room: str, name: str) -> None:
    """Start a bot client for a room's listed bot (after the commit that listed it)."""
    launcher = settings.PLAY_BOT_LAUNCHER
    if launcher == "celery":
        from celery import current_app

        await asyncio.to_thread(
            current_app.send_task,
            BOT_TASK,
            kwargs={"room": room, "name": name},
            queue=settings.PLAY_BOT_QUEUE,
        )
    elif launcher == "inline":
        bot = await database_sync_to_async(bot_resolve)(name=name)
        client = BotClient(bot_config(room=room, bot=bot), bot.kind)
        task = asyncio.get_running_loop().create_task(client.run(), name=f"bot-{room}-{name}")
        _keep(task)
    elif launcher != "off":
        log.warning("PLAY_BOT_LAUNCHER=%r is not celery, inline or off; bot %s not started", launcher, name)


def bot_config(*, room: str, bot: Bot, base: str | None = None, listed: bool = True) -> BotConfig:
    return BotConfig(
        url=bot_ws_url(room=room, base=base),
        name=bot.name,
        token=bot_token(room=room, agent_id=bot.agent.pk, name=bot.name, listed=listed),
        threshold=bot.threshold,
        origin=settings.PLAY_BOT_ORIGIN,
        idle_s=settings.PLAY_BOT_IDLE_S,
        listed=listed,
    )


def bot_run(*, room: str, name: str, base: str | None = None, listed: bool = True) -> str:
    """Play until removed, idle or refused (the Celery task and `manage.py play_bot`); why it stopped."""
    bot = bot_resolve(name=name)
    client = BotClient(bot_config(room=room, bot=bot, base=base, listed=listed), bot.kind)

    async def play() -> str:
        with _running_lock:
            _running[client] = asyncio.get_running_loop()
        try:
            return await client.run()
        finally:
            with _running_lock:
                _running.pop(client, None)

    return asyncio.run(play())


# The bots this process runs, each on its own event loop (a thread of the bots worker's pool).
_running: dict[BotClient, asyncio.AbstractEventLoop] = {}
_running_lock = threading.Lock()


def bots_stop_all(*, reason: str) -> int:
    """Every bot this process runs leaves its room; how many were told. A worker's warm shutdown waits for
    its running tasks, and a bot task ends only when its bot stops: one reconnecting to a server that was
    down held the worker's shutdown for its two minutes of retries. Safe from any thread."""
    with _running_lock:
        running = list(_running.items())
    for client, loop in running:
        with contextlib.suppress(RuntimeError):  # that loop has just ended: its bot is gone already
            loop.call_soon_threadsafe(client.stop, reason)
    return len(running)


class RoomBots:
    """The leader's view of its room's bots: which are online, and starting those that are not."""

    def __init__(self, slug: str):
        self.slug = slug
        self.players: dict[str, int] = {}  # bot name -> its player id, learnt on its join
        self.launched: dict[str, float] = {}

    def joined(self, name: str, player_id: int) -> None:
        self.players[name] = player_id

    def wake(self, names: list[str], online: Any, players: dict[int, dict[str, Any]]) -> list[asyncio.Task]:
        """Start each listed bot that is not online and was not started lately (a person came back).
        A new leader knows a bot's player by its name until the bot joins again."""
        now, tasks = time.monotonic(), []
        for name in names:
            pid = self.players.get(name)
            if pid is None:
                pid = next((p["id"] for p in players.values() if p.get("bot") and p["name"] == name), None)
            if pid is not None and online.get(pid, 0) > 0:
                continue
            if now - self.launched.get(name, -1e9) < RELAUNCH_AFTER_S:
                continue
            self.launched[name] = now
            tasks.append(_keep(asyncio.get_running_loop().create_task(_launch_logged(self.slug, name))))
        return tasks


def _keep(task: asyncio.Task) -> asyncio.Task:
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return task


async def _launch_logged(room: str, name: str) -> None:
    try:
        await bot_launch(room=room, name=name)
    except Exception:
        log.exception("room %s: bot %s could not be started", room, name)
