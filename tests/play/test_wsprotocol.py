"""uvicorn's websocket protocol as the project runs it (quizsite/core/wsprotocol.py), against a client that
reads nothing: the app's send waits (back-pressure), and both the app's close and the ping timeout drop
the connection at once instead of waiting for a buffer that never drains."""

from __future__ import annotations

import asyncio
import base64
import os
import socket

import pytest
import uvicorn

from quizsite.core.wsprotocol import PlayWebSocketProtocol
from tests.conftest import free_port

pytestmark = pytest.mark.asyncio
BLOB = "x" * 60_000


class FloodApp:
    """Accepts, then sends large texts until told to close; records what happened."""

    def __init__(self) -> None:
        self.sent = 0
        self.stuck = asyncio.Event()  # a send has waited longer than a healthy socket ever would
        self.close_now = asyncio.Event()
        self.disconnected = asyncio.Event()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "websocket":
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})

        async def flood() -> None:
            while True:
                task = asyncio.ensure_future(send({"type": "websocket.send", "text": BLOB}))
                done, _ = await asyncio.wait({task}, timeout=0.5)
                if not done:
                    self.stuck.set()
                    try:
                        await task
                    except OSError:
                        return
                elif task.exception() is not None:
                    return
                self.sent += 1

        async def closer() -> None:
            await self.close_now.wait()
            await send({"type": "websocket.close", "code": 4009})

        tasks = [asyncio.ensure_future(flood()), asyncio.ensure_future(closer())]
        while (await receive())["type"] != "websocket.disconnect":
            pass
        self.disconnected.set()
        for task in tasks:
            task.cancel()


async def serve(app: FloodApp, ping: float | None):
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, ws=PlayWebSocketProtocol, lifespan="off",
                            ws_ping_interval=ping, ws_ping_timeout=ping, log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.ensure_future(server.serve())
    while not server.started:
        await asyncio.sleep(0.02)
    return port, server, task


def stalled_client(port: int) -> socket.socket:
    """A websocket client that completes the handshake and then never reads again."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101")
    return sock


@pytest.mark.parametrize("how", ["app_close", "ping_timeout"])
async def test_a_client_that_reads_nothing_is_dropped_at_once(how):
    app = FloodApp()
    port, server, task = await serve(app, ping=0.5 if how == "ping_timeout" else None)
    sock = await asyncio.to_thread(stalled_client, port)  # blocking: the server runs on this loop
    try:
        async with asyncio.timeout(10):
            await app.stuck.wait()  # back-pressure: the app's send waits for the client
        sent = app.sent
        if how == "app_close":
            app.close_now.set()
        async with asyncio.timeout(3):
            await app.disconnected.wait()
        assert app.sent == sent  # nothing more was buffered for it
    finally:
        sock.close()
        server.should_exit = True
        await task
