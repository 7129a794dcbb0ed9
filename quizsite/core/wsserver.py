"""Fixes for the websocket server's own per-connection and per-message cost.

Daphne speaks websocket through autobahn, whose `WebSocketProtocol._connectionMade` pretty-prints
its whole configuration (about 40 options) for a debug log line on every new connection, whether or
not debug logging is on: a profile of 500 players joining a room put a quarter of the server's main
thread in `pprint`. Its module-level `pformat` is looked up at call time, so handing it a lazy
formatter leaves every log line that is emitted the same and skips the work for those that are not.
"""

from __future__ import annotations

import pprint
from typing import Any


class LazyPformat:
    """`pprint.pformat(obj)`, computed only when the log line is actually formatted."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any, *args: Any, **kwargs: Any) -> None:
        self.obj = obj

    def __str__(self) -> str:
        return pprint.pformat(self.obj)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def autobahn_lazy_debug_formatting() -> bool:
    """Install the lazy formatter in autobahn's websocket protocol; False when autobahn is absent."""
    try:
        from autobahn.websocket import protocol
    except ImportError:
        return False
    protocol.pformat = LazyPformat  # type: ignore[assignment]
    return True


SERVER_SEND = "thinkalike.server_send"


class ServerSend:
    """Outermost websocket middleware: puts the server's own `send` in the scope (`SERVER_SEND`).

    A play socket writes every word through it (play/consumers.py): through the middleware stack, each
    message also went through Channels' session wrapper, which looks at the session on every message
    although it acts only on HTTP responses, and two more layers of calls. With 500 sockets a word is
    500 such sends, and the stack was about 40% of their cost (py-spy)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        return await self.inner({**scope, SERVER_SEND: send}, receive, send)
