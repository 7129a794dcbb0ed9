"""Telling a database outage from a bug, for the player and for the log.

Why: with the database unreachable for a few seconds (a restart, a failover, a proxy dropping
connections), every player's command and every room's clock step fails the same way. Players got
`server_error` ("the server could not handle that message"), which says nothing they can act on, and
each server logged a traceback per message and per clock step (about 65 in a 3 s outage), burying the
one fact that mattered. Now a player hears `unavailable` and may try again, and the log says it once per
kind of failure every few seconds, with how many it left unsaid.
"""

from __future__ import annotations

import logging
import time

from django.db import InterfaceError, OperationalError

from .services import PlayError

try:  # Django wraps the driver's errors, but not on every path (a pool, a raw psycopg connection)
    import psycopg

    _DRIVER: tuple[type[BaseException], ...] = (psycopg.OperationalError, psycopg.InterfaceError)
except ImportError:  # pragma: no cover - SQLite-only installs
    _DRIVER = ()

UNREACHABLE: tuple[type[BaseException], ...] = (OperationalError, InterfaceError, *_DRIVER)
WARN_EVERY_S = 5.0
_last: dict[str, float] = {}  # failure kind -> when it was last logged
_unsaid: dict[str, int] = {}  # failure kind -> how many were not logged since


def db_unreachable(exc: BaseException) -> bool:
    """Whether `exc` (or an error it was raised from) says the database could not be reached or used."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, UNREACHABLE):
            return True
        seen.add(id(current))
        current = current.__cause__
    return False


def unavailable() -> PlayError:
    """What a player hears when their command failed for want of the database."""
    return PlayError("unavailable", "the database is unreachable; try again in a moment")


def warn_unreachable(log: logging.Logger, where: str, exc: BaseException) -> None:
    """One warning line, no traceback, per `where` and kind of error every WARN_EVERY_S seconds."""
    kind = f"{where}: {type(exc).__name__}"
    now = time.monotonic()
    if now - _last.get(kind, float("-inf")) < WARN_EVERY_S:
        _unsaid[kind] = _unsaid.get(kind, 0) + 1
        return
    _last[kind] = now
    unsaid = _unsaid.pop(kind, 0)
    detail = (str(exc).strip().splitlines() or [""])[0][:200]
    more = f" ({unsaid} more like it not logged)" if unsaid else ""
    log.warning("%s failed: the database is unreachable (%s: %s)%s", where, type(exc).__name__, detail, more)


def log_failure(log: logging.Logger, where: str, exc: BaseException, message: str, *args: object,
                level: int = logging.ERROR) -> None:
    """A failure the room lives through: an outage as `warn_unreachable`'s throttled line, anything else (a
    bug) at `level` with its traceback."""
    if db_unreachable(exc):
        warn_unreachable(log, where, exc)
    else:
        log.log(level, message, *args, exc_info=exc)


def reset() -> None:
    """Forget what was logged (tests: each starts with a quiet log)."""
    _last.clear()
    _unsaid.clear()
