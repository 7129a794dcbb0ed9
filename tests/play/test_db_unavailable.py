"""A command that fails because the database cannot be reached answers `unavailable`, not
`server_error`, and the log says so once in a while, not with a traceback per message (play/outage.py).
tests/e2e/test_db_outage.py makes PostgreSQL itself unreachable between two servers."""

import logging

import pytest
from channels.db import database_sync_to_async
from django.db import OperationalError

from quizsite.play import actor, outage, services
from quizsite.play.models import Player
from quizsite.play.writer import defers_writes

from .wsclient import Client

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio, pytest.mark.usefixtures("close_clients")]


@pytest.fixture(autouse=True)
def _quiet_log():
    outage.reset()
    yield
    outage.reset()


@defers_writes
def _unreachable(**kwargs: object) -> None:
    raise OperationalError("connection failed: connection to server at \"127.0.0.1\", port 5432 failed: Connection refused")


def _records(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == level and r.name.startswith("quizsite.play")]


async def test_a_buzz_while_the_database_is_unreachable_answers_unavailable_and_logs_one_line(
        tossup_set, monkeypatch, caplog):
    caplog.set_level(logging.WARNING)
    c = Client()
    await c.join("ann")
    await c.send({"type": "next"})
    qid = (await c.until("tossup"))["qid"]
    await c.until("words")
    monkeypatch.setattr(services, "room_buzz", _unreachable)
    for _ in range(3):
        await c.send({"type": "buzz", "qid": qid})
        error = await c.until("error")
        assert error["code"] == "unavailable" and "database is unreachable" in error["message"]
    assert _records(caplog, logging.ERROR) == []  # no traceback per message
    warnings = [r for r in _records(caplog, logging.WARNING) if "unreachable" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].exc_info is None, [r.getMessage() for r in warnings]
    monkeypatch.undo()  # the database is back: the same buzz goes through
    await c.send({"type": "buzz", "qid": qid})
    assert (await c.until("buzz"))["player_id"]


async def test_a_join_answered_unavailable_may_be_sent_again_on_the_same_socket(tossup_set, monkeypatch, caplog):
    caplog.set_level(logging.WARNING)
    real = actor._joins_db

    def unreachable(**kwargs: object) -> None:
        raise OperationalError("consuming input failed: server closed the connection unexpectedly")

    monkeypatch.setattr(actor, "_joins_db", unreachable)
    c = Client()
    await c.connect()
    await c.send({"type": "join", "name": "ann"})
    assert (await c.until("error"))["code"] == "unavailable"
    monkeypatch.setattr(actor, "_joins_db", real)
    await c.send({"type": "join", "name": "ann"})  # was already_joined forever: the failed join held the socket
    hello = await c.until("hello")
    assert await database_sync_to_async(lambda: list(Player.objects.values_list("pk", flat=True)))() == [hello["player_id"]]
    assert _records(caplog, logging.ERROR) == []


async def test_outage_warnings_are_one_line_per_kind_every_few_seconds(monkeypatch, caplog):
    caplog.set_level(logging.WARNING)
    log = logging.getLogger("quizsite.play.test")
    now = [100.0]
    monkeypatch.setattr(outage.time, "monotonic", lambda: now[0])
    exc = OperationalError("connection refused\nIs the server running?")
    for _ in range(10):
        outage.warn_unreachable(log, "play buzz", exc)
        outage.warn_unreachable(log, "room clock step", exc)
    now[0] += outage.WARN_EVERY_S
    outage.warn_unreachable(log, "play buzz", exc)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "play buzz failed: the database is unreachable (OperationalError: connection refused)",
        "room clock step failed: the database is unreachable (OperationalError: connection refused)",
        "play buzz failed: the database is unreachable (OperationalError: connection refused) (9 more like it not logged)",
    ]
    assert outage.db_unreachable(RuntimeError("wrapped")) is False
    wrapped = RuntimeError("wrapped")
    wrapped.__cause__ = exc
    assert outage.db_unreachable(wrapped) is True
