"""The play-room protocol end to end through the consumer (PROTOCOL.md), on the in-memory layer."""

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from django.contrib.sessions.backends.db import SessionStore

from quizsite.items.models import Response
from quizsite.play.hub import get_hub

from .wsclient import Client, drain

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio, pytest.mark.usefixtures("close_clients")]


async def start(*names):
    clients = []
    for name in names:
        c = Client()
        await c.join(name)
        clients.append(c)
    await clients[0].send({"type": "next"})
    tossup = await clients[0].until("tossup")
    for c in clients[1:]:
        await c.until("tossup")
    return clients, tossup["qid"]


async def close_all(clients):
    for c in clients:
        await c.close()


async def test_two_players_race_to_buzz_exactly_one_wins(tossup_set):
    (a, b), qid = await start("ann", "bob")
    await a.until("words")
    await asyncio.gather(a.send({"type": "buzz", "qid": qid}), b.send({"type": "buzz", "qid": qid}))
    buzz = await a.until("buzz")
    loser = b if buzz["player_id"] == a.frames[0]["player_id"] else a
    err = await loser.until("error")
    assert err["code"] == "buzzer_taken"
    await drain(a)
    await drain(b)
    assert sum(1 for f in a.frames + b.frames if f["type"] == "buzz") == 2  # the one buzz, seen by both
    assert sum(1 for f in a.frames + b.frames if f["type"] == "error") == 1
    await close_all([a, b])


async def test_accept_ends_tossup_and_row_exists_before_ruling(tossup_set):
    (a,), qid = await start("ann")
    await a.until("words")
    await a.send({"type": "buzz", "qid": qid})
    await a.until("buzz")
    await a.send({"type": "answer", "qid": qid, "text": "Zanzibar"})
    ruling = await a.until("ruling")
    rows = await database_sync_to_async(lambda: list(Response.objects.values_list("given", "verdict", "points")))()
    assert rows == [("Zanzibar", "accept", 15)]
    assert ruling["verdict"] == "accept" and ruling["points"] == 15
    scores = await a.until("scores")
    assert scores["players"][0]["score"] == 15
    end = await a.until("tossup_end")
    assert end["reason"] == "answered" and "Zanzibar" in end["answer"]
    # A client that missed the end asks for it (PROTOCOL.md `sync`): the end again, not a server error.
    await a.send({"type": "sync", "qid": qid, "have": 0})
    again = await a.until("tossup_end")
    assert again == end  # the end as it was sent (its reason "answered", not a rebuilt "ended")
    # A leader that took the room after the end never saw it: it rebuilds the end from the database
    # (on its database thread: the event loop must not touch the database itself).
    get_hub().actors["r"].last_end = None
    await a.send({"type": "sync", "qid": qid, "have": 0})
    rebuilt = await a.until("tossup_end")
    assert rebuilt["reason"] == "ended" and rebuilt["buzzes"] == end["buzzes"] and rebuilt["text"] == end["text"]
    await close_all([a])


async def test_prompt_then_accept(tossup_set):
    (a,), qid = await start("ann")
    await a.until("words")
    await a.send({"type": "buzz", "qid": qid})
    await a.until("buzz")
    await a.send({"type": "answer", "qid": qid, "text": "zanzi"})
    assert (await a.until("ruling"))["verdict"] == "prompt"
    await a.send({"type": "answer", "qid": qid, "text": "zanzibar"})
    assert (await a.until("ruling"))["verdict"] == "accept"
    await close_all([a])


async def test_the_holder_buzzing_again_is_not_told_another_player_holds_the_buzzer(tossup_set):
    """A player mashing space sends a second buzz before their first one's `buzz` arrives: it used to be
    answered `buzzer_taken` ("another player holds the buzzer"), and the page said "Too slow"."""
    (a, b), qid = await start("ann", "bob")
    await a.until("words")
    await a.send({"type": "buzz", "qid": qid})
    await a.send({"type": "buzz", "qid": qid})
    assert (await a.until("buzz"))["player_id"] == a.frames[0]["player_id"]
    err = await a.until("error")
    assert err["code"] == "locked_out" and "another player" not in err["message"]
    await b.send({"type": "buzz", "qid": qid})  # someone else still loses to the holder
    assert (await b.until("error"))["code"] == "buzzer_taken"
    await close_all([a, b])


async def test_reject_then_reading_resumes_and_other_player_can_buzz(tossup_set):
    (a, b), qid = await start("ann", "bob")
    await a.until("words")
    await a.send({"type": "buzz", "qid": qid})
    buzz = await a.until("buzz")
    await a.send({"type": "answer", "qid": qid, "text": "Madagascar"})
    ruling = await a.until("ruling")
    assert ruling["verdict"] == "reject" and ruling["points"] == -5
    resumed = await a.until("words")
    assert resumed["start"] == buzz["word_index"]
    await b.until("words", start=buzz["word_index"])
    await b.send({"type": "buzz", "qid": qid})
    assert (await b.until("buzz"))["player_id"] == b.frames[0]["player_id"]
    await a.send({"type": "buzz", "qid": qid})
    assert (await a.until("error"))["code"] in {"locked_out", "buzzer_taken"}
    await close_all([a, b])


async def test_answer_timeout_is_a_reject_with_empty_text(tossup_set):
    (a,), qid = await start("ann")
    await a.until("words")
    await a.send({"type": "buzz", "qid": qid})
    await a.until("buzz")
    ruling = await a.until("ruling", timeout=4)
    assert (ruling["verdict"], ruling["text"], ruling["points"]) == ("reject", "", -5)
    row = await database_sync_to_async(Response.objects.get)()
    assert row.meta.get("timeout") is True
    await close_all([a])


async def test_bad_input_gets_error_and_socket_stays_usable(tossup_set):
    c = Client()
    await c.connect()
    await c.send({"type": "buzz", "qid": "x"})
    assert (await c.recv())["code"] == "not_joined"
    await c.send({"type": "join", "name": "ann"})
    await c.until("hello")
    for bad, code in [
        ("{not json", "bad_json"),
        ({"type": "dance"}, "unknown_type"),
        ([1, 2], "bad_message"),
        ({"type": "chat", "text": "x" * 501}, "too_long"),
        ({"type": "answer", "qid": "q", "text": "y" * 201}, "too_long"),
        ({"type": "answer", "qid": "q", "text": "zanzibar"}, "not_your_buzz"),
        ("z" * 5000, "too_long"),
        ({"type": "join", "name": "again"}, "already_joined"),
        ('{"type": "settings", "ms_per_word": 1e400}', "bad_settings"),
        ({"type": "chat", "text": "nul\u0000byte"}, "bad_message"),
        ({"type": "next", "qid": None}, None),
    ]:
        if code is None:
            continue
        await c.send(bad)
        assert (await c.until("error"))["code"] == code
    await c.send({"type": "chat", "text": "still here"})
    assert (await c.until("chat"))["text"] == "still here"
    await c.close()


async def test_flooding_is_refused_then_closed(tossup_set):
    c = Client()
    await c.join("ann")
    for _ in range(150):
        await c.send({"type": "chat", "text": "spam"})
    codes = []
    while True:
        out = await c.comm.receive_output(timeout=2)
        if out["type"] == "websocket.close":
            break
        frame = json.loads(out["text"])
        if frame["type"] == "error":
            codes.append(frame["code"])
    assert "too_fast" in codes
    await asyncio.sleep(0.05)


async def test_no_frame_before_tossup_end_leaks_unread_words_or_answer(tossup_set):
    words = tossup_set.data["words"]
    (a, watcher), qid = await start("ann", "watcher")
    revealed = 0
    # read the whole tossup through to the dead-time end, checking each frame as it arrives
    while True:
        frame = await watcher.recv(timeout=5)
        raw = watcher.raw[-1]
        if frame["type"] == "tossup_end":
            assert frame["reason"] == "timeout"
            break
        if frame["type"] == "words":
            assert frame["start"] == revealed, "words arrive in order without gaps"
            revealed += len(frame["words"])
        assert "Zanzibar" not in raw and "Zanzi" not in raw
        for i, word in enumerate(words):
            if word.startswith("W") and i >= revealed:
                assert word.rstrip(".") not in raw, f"frame leaked unread word {word}: {raw}"
    assert revealed == len(words)
    await close_all([a, watcher])


async def test_reconnecting_guest_is_the_same_player_and_late_joiner_sees_only_revealed_words(tossup_set):
    session = SessionStore()
    session["guest_key"] = "guest-key-for-test"
    await database_sync_to_async(session.save)()
    cookie = f"sessionid={session.session_key}"

    a = Client(cookie=cookie)
    hello = await a.join("ann")
    me = hello["player_id"]
    await a.send({"type": "next"})
    qid = (await a.until("tossup"))["qid"]
    await a.until("words")
    await a.send({"type": "buzz", "qid": qid})
    await a.until("buzz")
    await a.send({"type": "answer", "qid": qid, "text": "Zanzibar"})
    await a.until("tossup_end")
    await a.send({"type": "next"})
    await a.until("tossup")
    await a.until("words")
    await a.close()

    again = Client(cookie=cookie)
    hello = await again.join("ann")
    assert hello["player_id"] == me
    state = hello["state"]
    assert [p["score"] for p in state["players"] if p["id"] == me] == [15]
    assert state["qid"] and 0 < len(state["words"]) < state["n_words"]
    words = (await database_sync_to_async(lambda: __import__("quizsite.play.models", fromlist=["Room"]).Room.objects.get(slug="r").item.data["words"])())
    assert state["words"] == words[: len(state["words"])]
    assert "zanzibar" not in json.dumps(state).lower()
    await again.close()


async def test_bad_names_are_refused_before_any_identity_is_made(tossup_set):
    from quizsite.agents.models import Agent

    c = Client()
    await c.connect()
    for name in ["", "   ", "x" * 41, 7]:
        await c.send({"type": "join", "name": name})
        assert (await c.until("error"))["code"] == "bad_name"
    assert await database_sync_to_async(Agent.objects.count)() == 0
    await c.send({"type": "join", "name": "ok"})
    await c.until("hello")


async def test_two_players_pressing_next_at_once_start_one_tossup(tossup_set):
    a, b = Client(), Client()
    await a.join("ann")
    await b.join("bob")
    await asyncio.gather(a.send({"type": "next"}), b.send({"type": "next"}))
    await a.until("tossup")
    await drain(a, 0.3)
    assert [f["type"] for f in a.frames].count("tossup") == 1
    assert "tossup_end" not in [f["type"] for f in a.frames]


def _signed_in_cookie(username: str) -> tuple[str, int]:
    """A session cookie of a signed-in user, as a browser holds it after signing in."""
    from django.contrib.auth import get_user_model
    from django.test import Client as HttpClient

    user = get_user_model().objects.create_user(username=username, password="a long enough password 1")
    http = HttpClient()
    http.force_login(user)
    return f"sessionid={http.cookies['sessionid'].value}", user.pk


async def test_a_signed_in_browser_joins_as_its_users_agent_and_a_stale_session_as_a_guest(tossup_set):
    """The user is read on join, not on connect (play/routing.py): it must still be the user's agent,
    and a session whose password hash no longer matches (the password changed) must not be."""
    from django.contrib.auth import get_user_model

    from quizsite.agents.models import Agent
    from quizsite.play.models import Player

    cookie, user_id = await database_sync_to_async(_signed_in_cookie)("ada")
    a = Client(cookie=cookie)
    hello = await a.join("ada in the room")
    player = await database_sync_to_async(Player.objects.select_related("agent").get)(pk=hello["player_id"])
    assert player.agent.user_id == user_id and player.agent.guest_key is None

    def change_password() -> None:
        user = get_user_model().objects.get(pk=user_id)
        user.set_password("another long password 2")
        user.save()

    await database_sync_to_async(change_password)()
    b = Client(room="r2", cookie=cookie)
    hello = await b.join("not ada")
    player = await database_sync_to_async(Player.objects.select_related("agent").get)(pk=hello["player_id"])
    assert player.agent.user_id is None and player.agent.guest_key
    assert await database_sync_to_async(Agent.objects.filter(user_id=user_id).count)() == 1
    await close_all([a, b])


async def test_a_guest_merged_into_an_account_leaves_one_line_on_the_scoreboard(tossup_set):
    """Signing in merges the guest's player in a room into the account's (accounts.services); the room's
    leader kept both in memory, and the board showed the guest's line beside the merged one."""
    from django.contrib.auth import get_user_model

    from quizsite.accounts.services import agent_merge_guest_into_user
    from quizsite.agents.models import Agent
    from quizsite.play.models import Player

    a, b = Client(), Client()
    await a.join("ann")
    bob = (await b.join("bob"))["player_id"]

    def make_account_and_merge() -> None:
        account = Agent.objects.get(players__pk=bob)
        user = get_user_model().objects.create_user("bob", password="a-long-pass-2026")
        Agent.objects.filter(pk=account.pk).update(user=user, guest_key=None)
        Player.objects.filter(pk=bob).update(score=10)
        Player.objects.filter(name="ann").update(score=-5)
        guest = Agent.objects.get(players__name="ann")
        assert agent_merge_guest_into_user(user=user, guest_key=guest.guest_key) is not None

    await database_sync_to_async(make_account_and_merge)()
    scores = await b.until("scores")
    assert [(p["id"], p["score"]) for p in scores["players"]] == [(bob, 5)]
    assert set(get_hub().actors["r"].players) == {bob}
    await close_all([a, b])
