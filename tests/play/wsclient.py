"""Helpers for driving the play consumer with Channels' WebsocketCommunicator."""

from __future__ import annotations

import asyncio
import json

from channels.testing import WebsocketCommunicator

from quizsite.play.routing import websocket_app

APP = websocket_app()  # the stack quizsite/asgi.py serves
FAST_QUERY = "ms_per_word=20&answer_ms=1000&dead_ms=300&set=t"
OPEN: list[Client] = []  # closed by the test module's teardown, even when a test fails


class Client:
    """A communicator that records every frame it receives, for leak checks."""

    def __init__(self, room: str = "r", query: str = FAST_QUERY, cookie: str | None = None):
        headers = [(b"cookie", cookie.encode())] if cookie else []
        self.comm = WebsocketCommunicator(APP, f"/ws/play/{room}/?{query}", headers=headers)
        self.frames: list[dict] = []
        self.raw: list[str] = []
        self.closed = False
        OPEN.append(self)

    async def connect(self) -> None:
        connected, _ = await self.comm.connect()
        assert connected

    async def send(self, msg: dict | str) -> None:
        await self.comm.send_to(text_data=msg if isinstance(msg, str) else json.dumps(msg))

    async def recv(self, timeout: float = 3) -> dict:
        raw = await self.comm.receive_from(timeout=timeout)
        self.raw.append(raw)
        frame = json.loads(raw)
        self.frames.append(frame)
        return frame

    async def until(self, kind: str, timeout: float = 5, **match) -> dict:
        """Receive frames until one of `kind` (matching the given fields) arrives."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            frame = await self.recv(timeout=max(0.01, end - loop.time()))
            if frame["type"] == kind and all(frame.get(k) == v for k, v in match.items()):
                return frame

    async def join(self, name: str) -> dict:
        await self.connect()
        await self.send({"type": "join", "name": name})
        return await self.until("hello")

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            await self.comm.disconnect()
        except BaseException:  # the app may already have stopped after a failed test
            pass
        await asyncio.sleep(0.05)  # let the room clock notice and stop


async def drain(client: Client, seconds: float = 0.2) -> None:
    """Record whatever arrives within `seconds` without cancelling the app (a receive timeout would)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while loop.time() < end:
        if not await client.comm.receive_nothing(timeout=0.05):
            await client.recv()
