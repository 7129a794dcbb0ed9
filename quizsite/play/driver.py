"""One clock task per room per process; a lease in the room row makes exactly one of them lead.

The leader reveals words and expires deadlines (services.room_tick); the others wait, ready to take
over when the leader's process goes away and its lease lapses. Consumers poke the local task after any
state change so that reading resumes at once after a wrong answer.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.utils import timezone

from .services import room_release, room_tick

log = logging.getLogger(__name__)
PROCESS_ID = f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
MIN_SLEEP, MAX_SLEEP = 0.01, 1.0

_listeners: dict[str, int] = {}
_tasks: dict[str, asyncio.Task] = {}
_pokes: dict[str, asyncio.Event] = {}


def group_name(slug: str) -> str:
    return f"room.{slug}"


async def broadcast(slug: str, events: list[dict]) -> None:
    layer = get_channel_layer()
    for event in events:
        await layer.group_send(group_name(slug), {"type": "room.event", "event": event})


def attach(slug: str) -> None:
    _listeners[slug] = _listeners.get(slug, 0) + 1
    loop = asyncio.get_running_loop()
    task = _tasks.get(slug)
    if task is None or task.done() or task.get_loop() is not loop:
        _pokes[slug] = asyncio.Event()
        _tasks[slug] = loop.create_task(_run(slug), name=f"room-clock-{slug}")


def detach(slug: str) -> None:
    _listeners[slug] = max(0, _listeners.get(slug, 0) - 1)
    poke(slug)


def poke(slug: str) -> None:
    event = _pokes.get(slug)
    if event is not None:
        event.set()


async def _run(slug: str) -> None:
    tick = database_sync_to_async(room_tick)
    poke_event = _pokes[slug]
    try:
        while _listeners.get(slug, 0) > 0:
            poke_event.clear()
            try:
                result = await tick(slug=slug, driver_id=PROCESS_ID, now=timezone.now())
            except Exception:  # a failed tick must not kill the room's clock
                log.exception("clock tick failed for room %s", slug)
                await asyncio.sleep(MAX_SLEEP)
                continue
            await broadcast(slug, result.events)
            wait = min(max(result.wake_in, MIN_SLEEP), MAX_SLEEP)
            try:
                await asyncio.wait_for(poke_event.wait(), timeout=wait)
            except TimeoutError:
                pass
    finally:
        await database_sync_to_async(room_release)(slug=slug, driver_id=PROCESS_ID)
        if _tasks.get(slug) is asyncio.current_task():
            del _tasks[slug]
