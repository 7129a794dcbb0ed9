"""A fix for the websocket server's own per-connection cost.

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
