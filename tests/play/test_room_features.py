"""Protocol additions of the play room (README "Play protocol extensions"): answer_html, buzzes and
history, per-question statistics, pause/resume, the moderator's settings, one player per agent."""

import asyncio
import json
import re
import time

import pytest
from channels.db import database_sync_to_async
from django.contrib.sessions.backends.db import SessionStore

from quizsite.items.models import Item
from quizsite.judge.render import answerline_html
from quizsite.play import hub as hub_module
from quizsite.play.models import Player, Room, TossupReading

from .wsclient import OPEN, Client, drain

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]
HOSTILE = '<script>alert(1)</script><b><u>Zanzibar</u></b> <img src=x onerror=alert(2)> [prompt on "Zanzi"; accept &lt;i&gt;x&lt;/i&gt;]'


@pytest.fixture(autouse=True)
async def _close_clients():
    yield
    while OPEN:
        await OPEN.pop().close()


async def play_one(client: Client, answer: str | None) -> tuple[str, dict]:
    """Start a tossup, buzz after the first words and answer (or skip it): its qid and tossup_end."""
    await client.send({"type": "next"})
    qid = (await client.until("tossup"))["qid"]
    await client.until("words")
    if answer is None:
        await client.send({"type": "next", "qid": qid})
    else:
        await client.send({"type": "buzz", "qid": qid})
        await client.until("buzz")
        await client.send({"type": "answer", "qid": qid, "text": answer})
    return qid, await client.until("tossup_end", timeout=6)


async def test_answerline_html_escapes_everything_but_its_own_tags():
    out = answerline_html(HOSTILE)
    assert set(re.findall(r"</?([a-z]+)", out)) == {"b", "u"}
    assert "<b><u>Zanzibar</u></b>" in out
    assert "<script" not in out and "<img" not in out and "onerror" not in out
    assert "&lt;i&gt;x&lt;/i&gt;" in out and "[prompt on &quot;Zanzi&quot;" in out  # directives kept as text
    assert (
        answerline_html("{Hamlet} [accept Prince of Denmark]")
        == "<b><u>Hamlet</u></b> [accept Prince of Denmark]"
    )
    assert answerline_html("Paris or City of Light") == "Paris or City of Light"


async def test_tossup_end_carries_answer_html_buzzes_and_then_stats(tossup_set):
    await database_sync_to_async(Item.objects.filter(pk=tossup_set.pk).update)(answer=HOSTILE)
    a = Client()
    await a.join("ann")
    qid, end = await play_one(a, "Madagascar")  # wrong: reading resumes, then the tossup times out
    assert end["reason"] == "timeout"
    assert "<script" not in end["answer_html"] and "<b><u>Zanzibar</u></b>" in end["answer_html"]
    assert end["answer"] == HOSTILE  # v1's field is unchanged
    assert [(b["name"], b["verdict"], b["points"]) for b in end["buzzes"]] == [("ann", "reject", -5)]
    assert end["buzzes"][0]["word_index"] >= 1 and end["words"] == tossup_set.data["words"]
    stats = await a.until("stats", qid=qid)
    assert (stats["heard"], stats["buzzes"], stats["correct"], stats["conversion"]) == (1, 1, 0, 0.0)


async def test_history_in_hello_and_on_request_and_the_running_tossup_is_left_out(tossup_set):
    a = Client()
    await a.join("ann")
    qid, _ = await play_one(a, "zanzibar")
    await a.until("stats", qid=qid)
    reading = await database_sync_to_async(TossupReading.objects.get)()
    assert (reading.qid, reading.heard, reading.reason) == (qid, 1, "answered")

    b = Client()  # a reload: the hello carries the history, with statistics
    hello = await b.join("bob")
    (entry,) = hello["state"]["history"]
    assert entry["qid"] == qid and "<b><u>Zanzibar</u></b>" in entry["answer_html"]
    assert entry["buzzes"][0]["verdict"] == "accept" and entry["buzzes"][0]["word"]
    assert entry["stats"]["correct"] == 1 and entry["stats"]["power_rate"] == 1.0
    await b.send({"type": "history"})
    assert (await b.until("history"))["tossups"][0]["qid"] == qid

    # The set has one tossup: read again, its earlier answer must not show while it is being read.
    await a.send({"type": "next"})
    await a.until("tossup")
    c = Client()
    hello = await c.join("cy")
    assert hello["state"]["history"] == [] and "zanzibar" not in json.dumps(hello["state"]).lower()
    await c.send({"type": "history"})
    assert (await c.until("history"))["tossups"] == []


async def test_stats_count_every_room_not_only_this_one(tossup_set):
    a = Client(room="r1")
    await a.join("ann")
    await play_one(a, "zanzibar")
    b = Client(room="r2")
    await b.join("bob")
    qid, _ = await play_one(b, "Madagascar")
    stats = await b.until("stats", qid=qid, timeout=6)
    assert (stats["heard"], stats["buzzes"], stats["correct"], stats["powers"]) == (2, 2, 1, 1)
    assert stats["conversion"] == 0.5 and stats["avg_buzz_word"] is not None


async def test_pause_stops_the_clock_and_resume_goes_on_word_by_word(tossup_set):
    a = Client(query="ms_per_word=60&answer_ms=1000&dead_ms=300&set=t")
    await a.join("ann")
    await a.send({"type": "next"})
    qid = (await a.until("tossup"))["qid"]
    await a.until("words", start=2)
    await a.send({"type": "pause", "paused": True})
    await a.until("paused", paused=True)
    shown = sum(len(f["words"]) for f in a.frames if f["type"] == "words")
    await a.send({"type": "buzz", "qid": qid})
    assert (await a.until("error"))["code"] == "paused"
    before = len(a.frames)
    await drain(a, 0.6)  # ten words' time: nothing may be read while paused
    assert not [f for f in a.frames[before:] if f["type"] == "words"]

    await a.send({"type": "pause", "paused": False})
    resumed_at = time.time() * 1000
    await a.until("paused", paused=False)
    first = await a.until("words")
    assert first["start"] == shown  # from where it stopped
    assert len(first["words"]) <= 2, "words burst after the resume"
    assert first["t"] >= resumed_at - 50  # due by a clock re-anchored at the resume
    await a.until("words", start=shown + 2)  # and reading goes on
    await a.send({"type": "pause", "paused": "yes"})
    assert (await a.until("error"))["code"] == "bad_message"


async def test_bad_settings_are_refused_and_good_ones_apply(tossup_set):
    a = Client()
    await a.join("ann")
    for bad in [
        {"auto_next": 5},
        {"auto_next_ms": "soon"},
        {"auto_next_ms": 10},
        {"categories": [1, 2]},
        {"categories": ["x" * 101]},
        {"categories": ["Astronomy"]},  # no tossup has it
        {"difficulty": 3},
        {"difficulty": "Open"},  # no tossup has it
        {"set": "nope"},
        {"colour": "red"},  # unknown
    ]:
        await a.send({"type": "settings", **bad})
        err = await a.until("error")
        assert err["code"] == "bad_settings", bad
    await a.send({"type": "settings", "categories": ["geography"], "auto_next": 1, "auto_next_ms": 1000})
    s = (await a.until("settings"))["settings"]
    assert s["categories"] == ["geography"] and s["auto_next"] == 1
    room = await database_sync_to_async(lambda: Player.objects.select_related("room").get().room)()
    assert room.settings["auto_next_ms"] == 1000


async def test_auto_advance_starts_the_next_tossup_after_its_countdown(tossup_set):
    a = Client(query="ms_per_word=20&answer_ms=1000&dead_ms=300&set=t&auto_next=1&auto_next_ms=1000")
    await a.join("ann")
    _, end = await play_one(a, "zanzibar")
    assert end["next_in_ms"] == 1000
    ended = time.monotonic()
    await a.until("tossup", timeout=4)
    assert time.monotonic() - ended >= 0.8
    await a.send({"type": "pause", "paused": True})  # a paused room does not advance
    await a.until("paused")


async def test_reconnect_and_second_tab_are_one_scoreboard_entry(tossup_set):
    session = SessionStore()
    session["guest_key"] = "one-guest"
    await database_sync_to_async(session.save)()
    cookie = f"sessionid={session.session_key}"
    tab1 = Client(cookie=cookie)
    me = (await tab1.join("ann"))["player_id"]
    tab2 = Client(cookie=cookie)
    hello = await tab2.join("ann")
    assert hello["player_id"] == me
    assert [p["id"] for p in hello["state"]["players"]] == [me]
    await tab1.close()
    await asyncio.sleep(0.4)  # a presence flush: the second tab keeps the player online
    again = Client(cookie=cookie)
    hello = await again.join("ann")
    entries = [p for p in hello["state"]["players"] if p["id"] == me]
    assert len(hello["state"]["players"]) == 1 and entries[0]["online"] is True
    assert await database_sync_to_async(Player.objects.count)() == 1


async def test_a_new_leader_rebuilds_the_history_and_keeps_the_pause(tossup_set):
    from quizsite.play.hub import get_hub

    a = Client()
    await a.join("ann")
    qid, _ = await play_one(a, "zanzibar")
    await a.send({"type": "pause", "paused": True})
    await a.until("paused", paused=True)
    await get_hub().actors["r"].stop()  # the leader goes; the next command finds a new one
    b = Client()
    hello = await b.join("bob")
    assert [e["qid"] for e in hello["state"]["history"]] == [qid]
    assert hello["state"]["history"][0]["stats"]["correct"] == 1
    assert hello["state"]["paused"] is True


async def test_a_lease_pass_between_the_first_players_entering_and_its_join_keeps_the_links_settings(
        tossup_set, monkeypatch):
    """The hub's lease pass takes over rooms whose leader died; it used to make a room too, without
    settings, when it ran between a first player's entering and that player's join (seen under load:
    rooms read at the default pace instead of the link's ms_per_word). The first join makes the room."""
    hub = hub_module.get_hub()
    enter = hub.enter

    async def enter_then_lease_pass(conn):
        await enter(conn)
        await hub._watch()  # the watch loop's pass, at the worst moment

    monkeypatch.setattr(hub, "enter", enter_then_lease_pass)
    client = Client(room="fresh")  # FAST_QUERY: ms_per_word=20
    await client.join("ann")
    room = await database_sync_to_async(Room.objects.get)(slug="fresh")
    assert room.settings.get("ms_per_word") == 20
