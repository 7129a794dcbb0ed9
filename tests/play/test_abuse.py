"""Abuse and faults at the socket: each case was reproduced against the old consumer and failed there."""

import asyncio
import gc
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from quizsite.agents.models import Agent
from quizsite.play import hub as hub_module
from quizsite.play.consumers import PlayConsumer
from quizsite.play.routing import websocket_urlpatterns

from .wsclient import Client, drain

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio, pytest.mark.usefixtures("close_clients")]


def the_hub():
    return hub_module.get_hub()


async def until_offline(client, player_id, timeout=5.0):
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        frame = await client.until("presence", timeout=max(0.01, end - loop.time()))
        if {p["id"]: p["online"] for p in frame["players"]}.get(player_id) is False:
            return frame


async def crowd_joining(n):
    """n sockets of one address that send their joins at the same moment."""
    crowd = [Client() for _ in range(n)]
    for c in crowd:
        await c.connect()
    await asyncio.gather(*(c.send({"type": "join", "name": f"p{i}"}) for i, c in enumerate(crowd)))
    return crowd


async def first_answer(client):
    """What the server answered a join with: its hello, or an error."""
    while (frame := await client.recv(timeout=5))["type"] not in ("hello", "error"):
        pass
    return frame


async def test_deeply_nested_json_is_an_error_not_a_dead_socket(tossup_set):
    a = Client()
    await a.join("ann")
    await a.send("[" * 2000 + "]" * 2000)  # under the frame limit, over the parser's recursion limit
    assert (await a.until("error"))["code"] == "bad_json"
    await a.send({"type": "chat", "text": "still here"})
    assert (await a.until("chat"))["text"] == "still here"


async def test_a_consumer_killed_without_disconnect_leaves_no_presence_behind(tossup_set):
    a, b = Client(), Client()
    await a.join("ann")
    hello = await b.join("bob")
    await drain(a)
    hub = the_hub()
    assert len(hub.conns) == 2
    b.comm.future.cancel()  # what daphne does to a consumer slow to close: disconnect() never runs
    b.closed = True
    await asyncio.sleep(0.1)
    assert len(hub.conns) == 1 and all(c.player_id != hello["player_id"] for c in hub.conns.values())
    await until_offline(a, hello["player_id"], timeout=2)


async def test_a_closed_socket_is_freed_at_once_not_left_for_the_cyclic_collector(tossup_set):
    """A full collection stops every room's clock for as long as it walks the heap: 500 closed sockets
    left 44,000 objects in reference cycles, and the next full pass took 60-100 ms (words late by that
    much for every player of the process). A closed socket's consumer must go by reference counting."""
    a, b = Client(), Client()
    ann = (await a.join("ann"))["player_id"]
    bob = (await b.join("bob"))["player_id"]
    await drain(a)
    gc.collect()
    gc.disable()
    try:
        await b.close()
        await until_offline(a, bob, timeout=2)
        left = [o.player_id for o in gc.get_objects() if type(o) is PlayConsumer]  # type(): a dead weak proxy raises on isinstance
    finally:
        gc.enable()
    assert left == [ann]


async def test_presence_expires_by_lease_when_no_process_marks_the_player(tossup_set, monkeypatch):
    monkeypatch.setattr(hub_module, "PRESENCE_BEAT_S", 0.1)
    monkeypatch.setattr(hub_module, "PRESENCE_TTL", timedelta(seconds=0.6))
    a, b = Client(), Client()
    await a.join("ann")
    hello = await b.join("bob")
    hub = the_hub()
    ghost = next(c for c in hub.conns.values() if c.player_id == hello["player_id"])
    del hub.conns[ghost.conn_id]  # the process holding bob's socket is gone: nobody marks him seen
    hub.rooms[ghost.slug].discard(ghost)
    await until_offline(a, hello["player_id"], timeout=5)


async def test_connections_per_address_are_capped(tossup_set, settings):
    settings.PLAY_MAX_CONN_PER_IP = 2
    a, b = Client(), Client()
    await a.connect()
    await b.connect()
    c = Client()
    await c.connect()
    err = await c.recv()
    assert err["code"] == "too_many_connections"
    assert (await c.comm.receive_output(timeout=1))["code"] == 4029
    c.closed = True
    await a.send({"type": "join", "name": "ann"})
    assert (await a.until("hello"))["player_id"]


async def test_connections_per_browser_session_are_capped(tossup_set, settings):
    """One browser's tabs share its session cookie: past PLAY_MAX_CONN_PER_SESSION its next socket is closed
    (4029), under a per-address cap that would let it in; another browser at the same address is not."""
    from django.contrib.sessions.backends.db import SessionStore

    settings.PLAY_MAX_CONN_PER_SESSION, settings.PLAY_MAX_CONN_PER_IP = 2, 100

    def session_key() -> str:
        session = SessionStore()
        session["seen"] = True
        session.create()
        return session.session_key

    one, other = await database_sync_to_async(session_key)(), await database_sync_to_async(session_key)()
    tabs = [Client(cookie=f"sessionid={one}") for _ in range(3)]
    for tab in tabs:
        await tab.connect()
    assert (await tabs[2].recv())["code"] == "too_many_connections"
    assert (await tabs[2].comm.receive_output(timeout=1))["code"] == 4029
    tabs[2].closed = True
    elsewhere = Client(cookie=f"sessionid={other}")
    await elsewhere.connect()
    await elsewhere.send({"type": "join", "name": "bea"})
    assert (await elsewhere.until("hello"))["player_id"]
    await tabs[0].send({"type": "join", "name": "ann"})
    assert (await tabs[0].until("hello"))["player_id"]


async def test_a_crowd_behind_one_address_joins_at_once_and_every_player_gets_a_hello(tossup_set, settings):
    # A hall behind one NAT, joining (or reconnecting after a process died) at the same moment: past the
    # address's burst, joins used to be refused `too_fast` and those players waited for a hello forever.
    settings.PLAY_IP_MSGS_PER_S = settings.PLAY_IP_JOINS_PER_S = 10.0  # bursts of 20
    crowd = await crowd_joining(30)
    hellos = await asyncio.gather(*(c.until("hello", timeout=10) for c in crowd))
    assert len({h["player_id"] for h in hellos}) == 30
    assert not [f for c in crowd for f in c.frames if f["type"] == "error"]
    # the address's other messages keep their own bucket: chat right after the crowd joined goes through
    await crowd[0].send({"type": "chat", "text": "all here"})
    assert (await crowd[0].until("chat"))["text"] == "all here"


async def test_joins_past_the_addresss_queue_are_refused_and_a_later_try_gets_in(tossup_set, settings):
    settings.PLAY_IP_JOINS_PER_S = 1.0  # a burst of 2, then one a second
    settings.PLAY_JOIN_WAIT_MAX_S = 1.5  # the third waits a second; a fourth would wait two
    crowd = await crowd_joining(4)
    tasks = {asyncio.ensure_future(first_answer(c)): c for c in crowd}
    refusal = None
    for done in asyncio.as_completed(list(tasks)):
        frame = await done
        if frame["type"] == "error":  # it comes at once, while the third join still waits its turn
            refusal = frame
            break
    late = next(c for t, c in tasks.items() if t.done() and t.result()["type"] == "error")
    assert refusal is not None and refusal["code"] == "too_fast" and "joining from your address" in refusal["message"]
    await late.send({"type": "join", "name": "again"})  # at once: the queue is still too long
    assert (await late.until("error"))["code"] == "too_fast"
    answers = await asyncio.gather(*tasks)
    assert sorted(a["type"] for a in answers) == ["error", "hello", "hello", "hello"]
    await asyncio.sleep(0.6)  # now it is short enough again
    await late.send({"type": "join", "name": "again"})
    assert (await late.until("hello", timeout=5))["player_id"]


async def test_a_socket_that_leaves_while_its_join_waits_makes_no_player_and_a_second_join_is_refused(tossup_set, settings):
    from quizsite.play.models import Player

    settings.PLAY_IP_JOINS_PER_S = 1.0  # a burst of 2, then one a second
    first, second, leaver, twice = Client(), Client(), Client(), Client()
    for c in (first, second):
        await c.join(c is first and "a" or "b")
    await leaver.connect()
    await leaver.send({"type": "join", "name": "leaver"})  # waits about a second
    await asyncio.sleep(0.1)
    await leaver.close()
    await twice.connect()
    await twice.send({"type": "join", "name": "twice"})  # waits about two seconds
    await twice.send({"type": "join", "name": "twice again"})
    assert (await twice.until("hello", timeout=5))["player_id"]
    assert (await twice.until("error"))["code"] == "already_joined"
    names = await database_sync_to_async(lambda: sorted(Player.objects.values_list("name", flat=True)))()
    assert names == ["a", "b", "twice"]


async def test_connecting_makes_no_guest_only_joining_does(tossup_set):
    before = await database_sync_to_async(Agent.objects.count)()
    a = Client()
    await a.connect()
    await asyncio.sleep(0.1)
    assert await database_sync_to_async(Agent.objects.count)() == before
    await a.send({"type": "join", "name": "ann"})
    await a.until("hello")
    assert await database_sync_to_async(Agent.objects.count)() == before + 1


async def test_unknown_websocket_paths_close_cleanly():
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/nothing/here/")
    connected, code = await comm.connect()
    assert not connected and code == 4404


@pytest.mark.parametrize("name", ["evil\u202egnp", "zero\u200bwidth", "tab\x07bell", "\u2028"])
async def test_names_with_invisible_or_control_characters_are_refused(tossup_set, name):
    a = Client()
    await a.connect()
    await a.send({"type": "join", "name": name})
    assert (await a.until("error"))["code"] == "bad_name"


async def test_duplicate_names_in_a_room_get_a_suffix(tossup_set):
    a, b = Client(), Client()
    await a.join("Ann")
    hello = await b.join("ann")
    names = {p["id"]: p["name"] for p in hello["state"]["players"]}
    assert names[hello["player_id"]] == "ann (2)"


async def test_a_chat_flood_within_each_rate_limit_costs_the_room_no_word(tossup_set):
    victim = Client()
    await victim.join("victim")
    crowd = [Client() for _ in range(30)]
    for i, c in enumerate(crowd):
        await c.join(f"c{i}")
    await victim.send({"type": "next"})
    tossup = await victim.until("tossup")
    stop = asyncio.Event()

    async def chatter(c):
        while not stop.is_set():
            await c.send({"type": "chat", "text": "spam " * 20})
            await asyncio.sleep(0.15)  # about 7 a second each: within the socket's own limit

    async def sink(c):
        while not stop.is_set():
            try:
                await c.recv(timeout=0.2)
            except Exception:
                pass

    tasks = [asyncio.create_task(chatter(c)) for c in crowd] + [asyncio.create_task(sink(c)) for c in crowd]
    end = await victim.until("tossup_end", timeout=20)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    got = {}
    for f in victim.frames:
        if f["type"] == "words" and f["qid"] == tossup["qid"]:
            for k, w in enumerate(f["words"]):
                assert f["start"] + k not in got, "a word arrived twice"
                got[f["start"] + k] = w
    assert [got[i] for i in range(tossup["n_words"])] == end["text"].replace(" (*)", "").split()


async def test_one_chatter_within_its_socket_limit_cannot_take_the_rooms_chat(tossup_set):
    flooder, other = Client(), Client()
    await flooder.join("flooder")
    other_id = (await other.join("other"))["player_id"]
    for _ in range(24):  # 33 a second: within the socket's burst of 20 and 8 a second; the room's burst is 20
        await flooder.send({"type": "chat", "text": "spam"})
        await asyncio.sleep(0.03)
    await drain(flooder, 0.3)
    said = [f for f in flooder.frames if f["type"] == "chat"]
    refused = [f["message"] for f in flooder.frames if f["type"] == "error"]
    assert len(said) < 10 and refused and set(refused) == {"you are chatting too fast; wait a moment"}
    # the room's share was left for the others: before, the flooder's lines took it all
    await other.send({"type": "chat", "text": "my turn"})
    assert (await other.until("chat", player_id=other_id))["text"] == "my turn"


async def test_refusals_at_the_rooms_chat_count_toward_the_flood_close(tossup_set):
    flooder = Client()
    await flooder.join("flooder")
    for i in range(60):  # about 7 a second after the burst: the socket's own limit never refuses one
        await flooder.send({"type": "chat", "text": "spam"})
        if i >= 20:
            await asyncio.sleep(0.13)
    while True:
        out = await flooder.comm.receive_output(timeout=3)
        if out["type"] == "websocket.close":
            break
    assert out["code"] == 4008


async def test_sync_returns_the_words_a_client_missed_and_nothing_unread(tossup_set):
    a = Client()
    await a.join("ann")
    await a.send({"type": "next"})
    tossup = await a.until("tossup")
    await a.until("words", start=3)
    await a.send({"type": "sync", "qid": tossup["qid"], "have": 0})
    while True:
        frame = await a.until("words")
        if frame["start"] == 0:
            break
    sent = max(f["start"] + len(f["words"]) for f in a.frames if f["type"] == "words")
    assert frame["words"] == [f"W{i:02d}" for i in range(len(frame["words"]))]
    assert len(frame["words"]) <= sent
    await a.send({"type": "sync", "qid": "nope", "have": 0})
    assert (await a.until("error"))["code"] == "no_tossup"


async def test_join_is_answered_from_a_room_led_elsewhere(tossup_set):
    """A command for a room led by another process is forwarded to it over the channel layer."""
    a = Client(room="far")
    await a.join("ann")
    hub = the_hub()
    actor = hub.actors["far"]
    # Pretend the room is led by another hub on the same layer: a second Hub in this loop.
    other = hub_module.Hub()
    await other.start()
    hub.local_only = other.local_only = False  # two hubs on one in-memory layer stand for two processes
    hub.actors.pop("far")
    other.actors["far"] = actor
    actor.hub = other
    actor.room.driver = other.channel  # the lease row names the other process
    await database_sync_to_async(type(actor.room).objects.filter(slug="far").update)(driver=other.channel)
    hub.leaders["far"] = other.channel
    b = Client(room="far")
    hello = await b.join("bob")
    assert {p["name"] for p in hello["state"]["players"]} == {"ann", "bob"}
    await b.send({"type": "chat", "text": "hi from afar"})
    assert (await a.until("chat"))["text"] == "hi from afar"
    assert (await b.until("chat"))["text"] == "hi from afar"
    await a.send({"type": "next"})
    tossup = await b.until("tossup")
    await b.send({"type": "buzz", "qid": tossup["qid"]})
    assert (await a.until("buzz"))["player_id"] == hello["player_id"]
    assert "far" not in hub.actors  # the room stayed led by the other process throughout
    await other.close()


class StallableApp:
    """The socket app with a switch that makes its sends wait, as a server's send waits for a client
    whose buffers are full because it reads nothing. Closes are not held: the server drops such a
    connection instead of waiting to flush it (quizsite/core/wsprotocol.py)."""

    def __init__(self, app):
        self.app, self.reading = app, asyncio.Event()
        self.reading.set()

    async def __call__(self, scope, receive, send):
        async def held(message):
            if message["type"] == "websocket.send":
                await self.reading.wait()
            await send(message)

        await self.app(scope, receive, held)


async def test_a_client_that_stops_reading_holds_up_nobody_and_is_closed(tossup_set, monkeypatch):
    from quizsite.play import consumers

    from .wsclient import APP, FAST_QUERY

    monkeypatch.setattr(consumers, "OUTBOX_LIMIT", 8)
    stall = StallableApp(APP)
    a = Client()
    await a.join("ann")
    s = Client()
    s.comm = WebsocketCommunicator(stall, f"/ws/play/r/?{FAST_QUERY}")
    hello = await s.join("sam")
    await drain(s)
    stall.reading.clear()  # sam's client reads nothing from here on
    await a.send({"type": "next"})
    end = await a.until("tossup_end", timeout=10)  # ann's words never waited for sam's socket
    words = {}
    for frame in a.frames:
        if frame["type"] == "words":
            words.update((frame["start"] + k, w) for k, w in enumerate(frame["words"]))
    assert [words[i] for i in range(len(words))] == end["text"].replace(" (*)", "").split()
    assert (await s.comm.receive_output(timeout=2)) == {"type": "websocket.close", "code": 4009}
    await s.comm.send_input({"type": "websocket.disconnect", "code": 4009})  # the server's, once it dropped sam
    s.closed = True
    await asyncio.sleep(0.1)
    hub = the_hub()
    assert all(c.player_id != hello["player_id"] for c in hub.conns.values())
    await a.send({"type": "chat", "text": "still served"})
    assert (await a.until("chat"))["text"] == "still served"


async def test_with_join_pacing_at_zero_first_joins_share_the_message_bucket(tossup_set, settings):
    settings.PLAY_IP_MSGS_PER_S = 10.0  # bursts of 20
    settings.PLAY_IP_JOINS_PER_S = 0
    crowd = await crowd_joining(25)
    answers = [frame["type"] for frame in await asyncio.gather(*(first_answer(c) for c in crowd))]
    assert answers.count("hello") == 20 and answers.count("error") == 5
