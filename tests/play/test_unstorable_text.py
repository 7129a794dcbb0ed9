"""Client text that no database can store (a lone UTF-16 surrogate: JSON's "\\ud800" escape parses to
one, and UTF-8 has no encoding for it) is refused at the socket, naming the field, and nothing is stored.

Why: such an answer reached the group commit, whose one insert of every room's responses then failed,
and every room of the batch got `server_error` with its right answer lost (play/writer.py now writes the
other rooms' rows anyway; this is the first line)."""

import asyncio
import json
import logging

import pytest
from channels.db import database_sync_to_async

from quizsite.items.models import Response, RulingReport
from quizsite.play.models import ChatMessage, Player, Room

from .wsclient import Client, drain

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio, pytest.mark.usefixtures("close_clients")]
BAD = "zan\\ud800zibar"  # as JSON text: json.loads gives "zan\ud800zibar"


def frame(**fields: object) -> str:
    """A JSON frame with BAD spliced in raw (json.dumps would escape the backslash)."""
    return json.dumps(fields).replace('"@BAD@"', f'"{BAD}"')


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


async def buzzed(room: str = "r", query: str | None = None) -> tuple[Client, str]:
    c = Client(room=room) if query is None else Client(room=room, query=query)
    await c.join("ann")
    await c.send({"type": "next"})
    qid = (await c.until("tossup"))["qid"]
    await c.until("words")
    await c.send({"type": "buzz", "qid": qid})
    await c.until("buzz")
    return c, qid


async def test_an_answer_with_a_lone_surrogate_is_refused_and_the_buzz_stands(tossup_set, caplog):
    c, qid = await buzzed(query="ms_per_word=50&answer_ms=5000&dead_ms=300&set=t")
    await c.send(frame(type="answer", qid=qid, text="@BAD@"))
    error = await c.until("error")
    assert error["code"] == "bad_message" and "text" in error["message"]
    assert await database_sync_to_async(Response.objects.count)() == 0
    await c.send({"type": "answer", "qid": qid, "text": "zanzibar"})  # the buzz is still the player's
    assert (await c.until("ruling"))["verdict"] == "accept"
    assert await database_sync_to_async(lambda: list(Response.objects.values_list("given", flat=True)))() == ["zanzibar"]
    assert no_tracebacks(caplog) == []


async def test_chat_and_report_comments_with_a_lone_surrogate_are_refused(tossup_set, caplog):
    c, qid = await buzzed()
    await c.send({"type": "answer", "qid": qid, "text": "wrong"})
    await c.until("ruling")
    await c.send(frame(type="chat", text="@BAD@"))
    error = await c.until("error")
    assert error["code"] == "bad_message" and "text" in error["message"]
    await c.send(frame(type="report", qid=qid, comment="@BAD@"))
    error = await c.until("error")
    assert error["code"] == "bad_message" and "comment" in error["message"]
    await c.send(frame(type="report", qid="@BAD@"))  # a report looks its qid up in the database
    error = await c.until("error")
    assert error["code"] == "bad_message" and "qid" in error["message"]
    assert await database_sync_to_async(ChatMessage.objects.count)() == 0
    assert await database_sync_to_async(RulingReport.objects.count)() == 0
    await c.send({"type": "report", "qid": qid, "comment": "I was right"})  # the socket and the ruling are fine
    assert (await c.until("reported"))["qid"] == qid
    assert no_tracebacks(caplog) == []


async def test_settings_and_names_with_a_lone_surrogate_are_refused(tossup_set, caplog):
    newcomer = Client()
    await newcomer.connect()
    await newcomer.send(frame(type="join", name="@BAD@"))
    assert (await newcomer.until("error"))["code"] == "bad_name"
    c = Client()
    await c.join("ann")
    before = await database_sync_to_async(lambda: Room.objects.get(slug="r").settings)()
    for key in ("set", "difficulty", "category"):
        await c.send(frame(type="settings", **{key: "@BAD@"}))
        error = await c.until("error")
        assert error["code"] == "bad_settings" and key in error["message"], error
    await c.send(frame(type="settings", categories=["ok", "@BAD@"]))
    assert (await c.until("error"))["code"] == "bad_settings"
    assert await database_sync_to_async(lambda: Room.objects.get(slug="r").settings)() == before
    assert await database_sync_to_async(lambda: list(Player.objects.values_list("name", flat=True)))() == ["ann"]
    assert no_tracebacks(caplog) == []


async def test_one_bad_answer_among_six_rooms_answering_at_once_costs_the_others_nothing(tossup_set, caplog):
    """The auditor's reproduction: six rooms, one player each, all buzzed; all answer at once, one of
    them with a lone surrogate. Every room got server_error and the five right answers were lost."""
    query = "ms_per_word=50&answer_ms=5000&dead_ms=300&set=t"
    clients = [Client(room=f"room{i}", query=query) for i in range(6)]
    for i, c in enumerate(clients):
        await c.join(f"p{i}")
    for c in clients:
        await c.send({"type": "next"})
    qids = [(await c.until("tossup"))["qid"] for c in clients]
    for c in clients:
        await c.until("words")
    for c, qid in zip(clients, qids, strict=True):
        await c.send({"type": "buzz", "qid": qid})
    for c in clients:
        await c.until("buzz")
    texts = ["zanzibar", "@BAD@", "zanzibar", "zanzibar", "zanzibar", "zanzibar"]
    await asyncio.gather(*(c.send(frame(type="answer", qid=qid, text=text))
                           for c, qid, text in zip(clients, qids, texts, strict=True)))
    for c in clients:
        await drain(c, 0.5)
    outcomes = [[(f["type"], f.get("code") or f.get("verdict")) for f in c.frames if f["type"] in ("ruling", "error")]
                for c in clients]
    assert outcomes[1] == [("error", "bad_message")]
    assert all(o == [("ruling", "accept")] for i, o in enumerate(outcomes) if i != 1), outcomes
    rows = await database_sync_to_async(lambda: sorted(Response.objects.values_list("room", "given")))()
    assert rows == [(f"room{i}", "zanzibar") for i in (0, 2, 3, 4, 5)]
    assert no_tracebacks(caplog) == []
