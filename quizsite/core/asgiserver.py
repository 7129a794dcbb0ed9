"""How the ASGI server is started: one command line for quickstart, the end-to-end tests and the benchmarks.

Why uvicorn (with uvloop, httptools and the `websockets` Sans-I/O protocol) rather than daphne: under
load the cost left in a live room was the server's own. In one run of `benchmarks/ws_load.py` each,
uvicorn's process used 0.36-0.65x daphne's CPU for the same case; and daphne gives the application no
back-pressure: a socket that stops reading buffers without bound until its ping times out. uvicorn's
websocket `send` waits while the socket's kernel and transport buffers are full, which is what lets a
socket's own outbox (play/consumers.py) notice a client that does not read and close it
(quizsite/core/wsprotocol.py drops such a connection rather than wait to flush it).
`benchmarks/ws_load.py --servers daphne uvicorn` measures the two in one run. daphne stays installed for
`runserver` and can still be chosen: `ASGI_SERVER=daphne`.
"""

from __future__ import annotations

import os
import sys

SERVERS = ("uvicorn", "daphne")
APPLICATION = "quizsite.asgi:application"
MAX_MESSAGE = 64 * 1024  # bytes: a frame larger than this is refused by the server itself (consumers cap at 4 KiB)


def server_name(name: str | None = None) -> str:
    chosen = (name or os.environ.get("ASGI_SERVER") or "uvicorn").strip().lower()
    if chosen not in SERVERS:
        raise ValueError(f"ASGI_SERVER must be one of {', '.join(SERVERS)}, not {chosen!r}")
    return chosen


def server_command(host: str, port: int, *, server: str | None = None, ping_interval: float = 10.0,
                   ping_timeout: float = 10.0) -> list[str]:
    """The argv that serves the app on host:port. A client that answers no ping within
    `ping_interval + ping_timeout` seconds is closed, whichever server runs."""
    if server_name(server) == "daphne":
        return [sys.executable, "-m", "daphne", "--ping-interval", f"{ping_interval:g}", "--ping-timeout",
                f"{ping_timeout:g}", "-b", host, "-p", str(port), APPLICATION]
    return [
        sys.executable, "-m", "uvicorn", APPLICATION, "--host", host, "--port", str(port),
        "--loop", "uvloop", "--http", "httptools", "--ws", "quizsite.core.wsprotocol:PlayWebSocketProtocol",
        "--ws-ping-interval", f"{ping_interval:g}", "--ws-ping-timeout", f"{ping_timeout:g}",
        "--ws-max-size", str(MAX_MESSAGE),
        # Compression is negotiated per socket, so every word would be deflated once per player: a fifth of
        # the main thread while 500 players joined (py-spy), for messages of a few dozen bytes. daphne
        # does not compress either.
        "--ws-per-message-deflate", "false",
        # Channels' router knows no lifespan events; client addresses are the socket's own, as with
        # daphne (a proxy in front is trusted only when FORWARDED_ALLOW_IPS names it).
        "--lifespan", "off", *_proxy_args(), "--no-access-log", "--log-level", "warning",
        "--backlog", "4096", "--timeout-graceful-shutdown", "5",
    ]


def _proxy_args() -> list[str]:
    allowed = os.environ.get("FORWARDED_ALLOW_IPS", "").strip()
    return ["--proxy-headers", "--forwarded-allow-ips", allowed] if allowed else ["--no-proxy-headers"]
