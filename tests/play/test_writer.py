"""Group commit (play/writer.py) and the batched joins built on it."""

import asyncio
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.db import connection

from quizsite.agents.models import Agent
from quizsite.agents.services import agent_get_or_create_guests
from quizsite.play import services
from quizsite.play.models import ChatMessage, Player, Room
from quizsite.play.services import PlayError
from quizsite.play.writer import GroupWriter

from .wsclient import Client

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio, pytest.mark.usefixtures("close_clients")]


@database_sync_to_async
def _room_with_player() -> tuple[Room, Player]:
    room = Room.objects.create(slug="w")
    agent = Agent.objects.create(kind=Agent.Kind.HUMAN, name="a")
    return room, Player.objects.create(room=room, agent=agent, name="a")


def _say(*, player: Player, text: str, fail: bool = False) -> int:
    message = ChatMessage.objects.create(room=player.room, player=player, text=text)
    if fail:
        raise ValueError("this write fails after writing a row")
    return message.pk


async def test_writes_that_arrive_together_share_transactions_and_each_gets_its_own_result():
    room, player = await _room_with_player()
    writer = GroupWriter()
    ids = await asyncio.gather(*(writer.run(_say, player=player, text=f"m{i}") for i in range(30)))
    assert len(set(ids)) == 30
    # The first write goes alone (nothing was waiting); the 29 that queued behind it go in one more.
    assert writer.writes == 30 and writer.batches <= 3
    texts = await database_sync_to_async(lambda: sorted(ChatMessage.objects.values_list("text", flat=True)))()
    assert texts == sorted(f"m{i}" for i in range(30))


async def test_a_failing_write_is_rolled_back_alone_and_raises_to_its_own_caller():
    room, player = await _room_with_player()
    writer = GroupWriter()
    results = await asyncio.gather(
        *(writer.run(_say, player=player, text=f"m{i}", fail=(i == 3)) for i in range(8)), return_exceptions=True
    )
    assert isinstance(results[3], ValueError)
    assert all(isinstance(r, int) for i, r in enumerate(results) if i != 3)
    texts = await database_sync_to_async(lambda: set(ChatMessage.objects.values_list("text", flat=True)))()
    assert texts == {f"m{i}" for i in range(8)} - {"m3"}


def _say_depth(*, player: Player, text: str, fail: bool = False) -> int:
    """Writes a row, then answers how many savepoints it runs under (maybe failing after the row)."""
    ChatMessage.objects.create(room=player.room, player=player, text=text)
    if fail:
        raise ValueError("this write fails after writing a row")
    return sum(1 for sid in connection.savepoint_ids if sid is not None)  # None: a block without one


async def test_the_first_write_of_a_transaction_runs_without_a_savepoint_and_fails_alone():
    room, player = await _room_with_player()
    writer = GroupWriter()
    first = asyncio.ensure_future(writer.run(_say_depth, player=player, text="alone"))
    await asyncio.sleep(0)  # the first batch is on its way: the rest queue for the next
    # The next batch starts with a write that fails: it is rolled back alone, and the rest go on in a
    # new transaction, whose first write again needs no savepoint.
    rest = [writer.run(_say_depth, player=player, text=f"m{i}", fail=(i == 0)) for i in range(4)]
    results = await asyncio.gather(first, *rest, return_exceptions=True)
    assert results[0] == 0
    assert isinstance(results[1], ValueError)
    assert results[2:] == [0, 1, 1]
    assert writer.batches == 2
    texts = await database_sync_to_async(lambda: set(ChatMessage.objects.values_list("text", flat=True)))()
    assert texts == {"alone", "m1", "m2", "m3"}


async def test_grouped_writes_reach_one_call_with_every_item_in_order():
    calls: list[list[str]] = []

    def many(*, items: list[str]) -> list[object]:
        calls.append(list(items))
        return [ValueError(i) if i == "bad" else i.upper() for i in items]

    writer = GroupWriter()
    first = asyncio.ensure_future(writer.run_grouped(many, "a"))
    await asyncio.sleep(0)  # the first batch is on its way: the rest queue for the next
    rest = [writer.run_grouped(many, x) for x in ("b", "bad", "c")]
    results = await asyncio.gather(first, *rest, return_exceptions=True)
    assert results[0] == "A" and results[1] == "B" and results[3] == "C"
    assert isinstance(results[2], ValueError)
    assert calls == [["a"], ["b", "bad", "c"]]


@database_sync_to_async
def _join_many(requests: list[tuple[int, str]]) -> list:
    room = Room.objects.get_or_create(slug="j")[0]
    return services.room_join_many(room=room, requests=requests, now=room.created_at, taken=None)


async def test_room_join_many_is_room_join_for_each_request_in_order():
    agents = await database_sync_to_async(
        lambda: [Agent.objects.create(kind=Agent.Kind.HUMAN, name=f"a{i}") for i in range(4)]
    )()
    first = await _join_many([(agents[0].pk, "Ann")])
    # A crowd: a second Ann, a bad name, the first Ann again (reconnect, same player), a Bob.
    got = await _join_many([(agents[1].pk, "Ann"), (agents[2].pk, "bad\u202ename"), (agents[0].pk, "Ann"),
                            (agents[3].pk, "Bob")])
    assert got[0].name == "Ann (2)"
    assert isinstance(got[1], PlayError) and got[1].code == "bad_name"
    assert got[2].pk == first[0].pk and got[2].name == "Ann"
    assert got[3].name == "Bob" and got[3].pk is not None
    rows = await database_sync_to_async(lambda: dict(Player.objects.values_list("agent_id", "name")))()
    assert rows == {agents[0].pk: "Ann", agents[1].pk: "Ann (2)", agents[3].pk: "Bob"}


async def test_agent_get_or_create_guests_keeps_known_keys_and_makes_the_rest():
    known = await database_sync_to_async(lambda: Agent.objects.create(kind=Agent.Kind.HUMAN, name="k", guest_key="K"))()
    got = await database_sync_to_async(agent_get_or_create_guests)(items=[("K", "x"), ("N1", "n1"), ("N2", "n2")])
    assert got[0].pk == known.pk and got[1].pk and got[2].pk and got[1].pk != got[2].pk
    assert await database_sync_to_async(lambda: Agent.objects.filter(guest_key__in=["N1", "N2"]).count())() == 2


async def test_a_crowd_joining_at_once_gets_unique_names_and_one_player_each(tossup_set):
    clients = [Client(room="crowd") for _ in range(12)]
    await asyncio.gather(*(c.connect() for c in clients))
    for c in clients:
        await c.send({"type": "join", "name": "Sam"})
    hellos = await asyncio.gather(*(c.until("hello") for c in clients))
    ids = {h["player_id"] for h in hellos}
    assert len(ids) == 12
    names = await database_sync_to_async(lambda: sorted(Player.objects.filter(room__slug="crowd").values_list("name", flat=True)))()
    assert len(set(names)) == 12 and "Sam" in names
    from quizsite.play.hub import get_hub

    # One write per joiner: a guest is made by the leader in the same write as its player.
    assert get_hub().writer.writes == 12
    guests = await database_sync_to_async(lambda: Agent.objects.filter(players__room__slug="crowd").count())()
    assert guests == 12


async def test_rooms_whose_first_players_arrive_together_are_taken_in_one_batch(tossup_set):
    from quizsite.play.hub import get_hub

    clients = [Client(room=f"first{i}") for i in range(6)]
    await asyncio.gather(*(c.connect() for c in clients))
    sqls: list[str] = []
    record = _recorder(sqls)
    await database_sync_to_async(lambda: connection.execute_wrappers.append(record))()
    try:
        for i, c in enumerate(clients):
            await c.send({"type": "join", "name": f"p{i}"})
        await asyncio.gather(*(c.until("hello") for c in clients))
    finally:
        await database_sync_to_async(lambda: connection.execute_wrappers.remove(record))()
    takes = get_hub().takes
    assert takes.writes == 6 and takes.batches < 6  # the first goes alone; those behind it go together
    # ...and so do their joins: the players of every room that joined together in one insert.
    inserts = sum(s.startswith('INSERT INTO "PLAY_PLAYER"') for s in sqls)
    assert inserts < 6  # one per batch of joins, not one per room
    drivers = await database_sync_to_async(lambda: set(Room.objects.values_list("driver", flat=True)))()
    assert len(drivers) == 1 and "" not in drivers


async def test_each_hello_lists_every_player_as_they_are_now(tossup_set):
    """The hello's player list is spliced from cached entries: a change of name, score or presence
    must reach the next joiner's hello."""
    a, b = Client(room="h"), Client(room="h")
    hello_a = await a.join("Ann")
    await b.join("Bob")
    await b.close()  # Bob leaves: offline in the next hello
    await a.until("presence")
    await a.send({"type": "next"})
    tossup = await a.until("tossup")
    await a.until("words")
    await a.send({"type": "buzz", "qid": tossup["qid"]})
    await a.until("buzz")
    await a.send({"type": "answer", "qid": tossup["qid"], "text": "definitely wrong"})
    await a.until("ruling")
    c = Client(room="h")
    hello_c = await c.join("Cy")
    players = {p["name"]: p for p in hello_c["state"]["players"]}
    assert players["Ann"]["online"] is True and players["Bob"]["online"] is False and players["Cy"]["online"] is True
    assert players["Ann"]["id"] == hello_a["player_id"]
    assert players["Ann"]["score"] == -5 and players["Bob"]["score"] == 0
    assert set(players["Ann"]) == {"id", "name", "score", "bot", "online"}


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="row locks are real on PostgreSQL only (tests/e2e/test_postgres_play.py runs this file there)")
async def test_presence_marks_skip_player_rows_that_a_group_commit_holds():
    import psycopg
    from django.utils import timezone

    from quizsite.play import leases

    room, held = await _room_with_player()
    other = await database_sync_to_async(
        lambda: Player.objects.create(room=room, agent=Agent.objects.create(kind=Agent.Kind.HUMAN, name="b"), name="b")
    )()
    db = connection.settings_dict
    with psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"], dbname=db["NAME"]) as lock:
        lock.execute("SELECT id FROM play_player WHERE id = %s FOR UPDATE", [held.pk])  # a batch mid-commit
        now = timezone.now()
        await asyncio.wait_for(database_sync_to_async(leases.players_seen)(player_ids=[held.pk, other.pk], now=now), 5)
        lock.rollback()
    seen = await database_sync_to_async(lambda: dict(Player.objects.values_list("pk", "last_seen")))()
    assert seen[other.pk] == now and seen[held.pk] != now


@pytest.mark.skipif(connection.vendor != "postgresql",
                    reason="row locks are real on PostgreSQL only (tests/e2e/test_postgres_play.py runs this file there)")
async def test_lease_renewals_skip_a_room_row_that_a_group_commit_holds():
    import psycopg
    from django.utils import timezone

    from quizsite.play import leases

    now = timezone.now()
    held, free = await database_sync_to_async(lambda: [
        leases.room_take(slug=slug, driver="me", now=now, lease=timedelta(seconds=2)) for slug in ("held", "free")
    ])()
    db = connection.settings_dict
    with psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"], dbname=db["NAME"]) as lock:
        lock.execute("SELECT id FROM play_room WHERE id = %s FOR UPDATE", [held.pk])  # a batch mid-commit
        later = now + timedelta(seconds=1)
        got = await asyncio.wait_for(database_sync_to_async(leases.rooms_renew)(
            rooms=[held, free], driver="me", now=later, lease=timedelta(seconds=2)), 5)
        lock.rollback()
    assert got == {"held": None, "free": True}  # None: still ours, renewed on the next pass
    until = await database_sync_to_async(lambda: dict(Room.objects.values_list("slug", "driver_until")))()
    assert until["free"] == later + timedelta(seconds=2) and until["held"] == now + timedelta(seconds=2)


def _say_in_step(*, player: Player, text: str, fail: bool = False) -> int:
    """A transition's shape: its own step block, a row written, then maybe refused."""
    from quizsite.play.work import step

    with step():
        message = ChatMessage.objects.create(room=player.room, player=player, text=text)
        if fail:
            raise PlayError("refused", "refused after writing a row")
        return message.pk


async def test_a_refused_transition_in_a_batch_rolls_back_to_its_own_savepoint():
    room, player = await _room_with_player()
    writer = GroupWriter()
    results = await asyncio.gather(
        *(writer.run(_say_in_step, player=player, text=f"m{i}", fail=(i % 3 == 1)) for i in range(9)),
        return_exceptions=True,
    )
    assert [isinstance(r, PlayError) for r in results] == [i % 3 == 1 for i in range(9)]
    texts = await database_sync_to_async(lambda: set(ChatMessage.objects.values_list("text", flat=True)))()
    assert texts == {f"m{i}" for i in range(9) if i % 3 != 1}
    # Outside a batch the same block is a transaction of its own, and a refusal leaves nothing behind.
    with pytest.raises(PlayError):
        await database_sync_to_async(_say_in_step)(player=player, text="alone", fail=True)
    assert await database_sync_to_async(lambda: ChatMessage.objects.filter(text="alone").exists())() is False


@database_sync_to_async
def _reading_rooms(n: int) -> list[tuple[Room, int]]:
    """`n` rooms led by "me", each reading a tossup, each with one player: (room, player id)."""
    from django.utils import timezone

    from quizsite.play import leases

    now = timezone.now()
    out = []
    for i in range(n):
        room = leases.room_take(slug=f"b{i}", driver="me", now=now, lease=timedelta(hours=1),
                                initial_settings={"set": "t", "ms_per_word": 20})
        agent = Agent.objects.create(kind=Agent.Kind.HUMAN, name=f"p{i}")
        player = services.room_join(room=room, agent_id=agent.pk, name=f"p{i}", now=now)
        services.room_next(room=room, player_id=player.pk, now=now)
        services.room_start_reading(room=room, now=now)
        out.append((room, player.pk))
    return out


def _recorder(sqls: list[str]):
    def record(execute, sql, params, many, context):
        sqls.append(sql.lstrip()[:40].upper())
        return execute(sql, params, many, context)
    return record


async def _batched(writer: GroupWriter, calls: list[dict]) -> list:
    """The calls in one batch (behind a first write that goes alone)."""
    first = asyncio.ensure_future(writer.run(_say_depth, player=calls[0]["player"], text="first"))
    await asyncio.sleep(0)
    results = await asyncio.gather(*(writer.run(c["fn"], **c["kwargs"]) for c in calls), return_exceptions=True)
    await first
    return results


async def test_a_batch_of_rulings_writes_its_rows_with_one_statement_per_kind_and_no_savepoints(tossup_set):
    from django.utils import timezone

    from quizsite.items.models import Response

    rooms = await _reading_rooms(5)
    anyone = await database_sync_to_async(lambda: Player.objects.get(pk=rooms[0][1]))()
    writer = GroupWriter()
    buzzes = await _batched(writer, [
        {"fn": services.room_buzz, "player": anyone,
         "kwargs": {"room": room, "player_id": pid, "qid": room.qid, "now": timezone.now()}} for room, pid in rooms])
    assert all(b.events[-1]["type"] == "buzz" for b in buzzes)

    sqls: list[str] = []
    record = _recorder(sqls)
    await database_sync_to_async(lambda: connection.execute_wrappers.append(record))()
    try:
        rulings = await _batched(writer, [
            {"fn": services.room_answer, "player": anyone,
             "kwargs": {"room": room, "player_id": pid, "qid": room.qid, "text": "wrong", "now": timezone.now()}}
            for room, pid in rooms])
    finally:
        await database_sync_to_async(lambda: connection.execute_wrappers.remove(record))()
    assert [r.events[0]["verdict"] for r in rulings] == ["reject"] * 5
    writes = [s for s in sqls if not s.startswith("SELECT")]
    # The first write (a chat line, alone) inserts one row; the five rulings insert their five responses
    # in one statement, and write their rooms (and scores) with one statement each on PostgreSQL.
    assert sum(s.startswith("INSERT INTO \"ITEMS_RESPONSE\"") for s in writes) == 1
    assert not any(s.startswith(("SAVEPOINT", "RELEASE")) for s in writes)
    if connection.vendor == "postgresql":
        assert sum(s.startswith('UPDATE "PLAY_ROOM"') for s in writes) == 1
        assert sum(s.startswith('UPDATE "PLAY_PLAYER"') for s in writes) == 1
    rows = await database_sync_to_async(lambda: sorted(Response.objects.values_list("room", "points")))()
    assert rows == [(f"b{i}", -5) for i in range(5)]
    scores = await database_sync_to_async(lambda: sorted(Player.objects.filter(room__slug__startswith="b")
                                                          .values_list("score", flat=True)))()
    assert scores == [-5] * 5


async def test_a_deferred_ruling_whose_lease_was_lost_writes_nothing_and_the_others_stand(tossup_set):
    from django.utils import timezone

    from quizsite.items.models import Response
    from quizsite.play.work import LostLease

    rooms = await _reading_rooms(3)
    anyone = await database_sync_to_async(lambda: Player.objects.get(pk=rooms[0][1]))()
    writer = GroupWriter()
    for room, pid in rooms:
        await writer.run(services.room_buzz, room=room, player_id=pid, qid=room.qid, now=timezone.now())
    await database_sync_to_async(lambda: Room.objects.filter(slug="b1").update(driver="someone-else"))()
    results = await _batched(writer, [
        {"fn": services.room_answer, "player": anyone,
         "kwargs": {"room": room, "player_id": pid, "qid": room.qid, "text": "wrong", "now": timezone.now()}}
        for room, pid in rooms])
    assert isinstance(results[1], LostLease)
    assert not isinstance(results[0], Exception) and not isinstance(results[2], Exception)
    rows = await database_sync_to_async(lambda: sorted(Response.objects.values_list("room", flat=True)))()
    assert rows == ["b0", "b2"]
    assert await database_sync_to_async(lambda: Player.objects.get(pk=rooms[1][1]).score)() == 0


async def test_a_transition_marked_defers_writes_that_writes_directly_fails_its_transaction():
    from quizsite.play.writer import defers_writes

    room, player = await _room_with_player()

    @defers_writes
    def sneaky(*, player: Player) -> int:
        return ChatMessage.objects.create(room=player.room, player=player, text="direct").pk

    writer = GroupWriter()
    results = await _batched(writer, [{"fn": sneaky, "player": player, "kwargs": {"player": player}},
                                      {"fn": _say_depth, "player": player, "kwargs": {"player": player, "text": "ok"}}])
    # A programming error, loud: the write and the rest of its transaction fail, and nothing of it stands.
    assert isinstance(results[0], RuntimeError) and "defers_writes" in str(results[0])
    assert isinstance(results[1], RuntimeError)
    texts = await database_sync_to_async(lambda: set(ChatMessage.objects.values_list("text", flat=True)))()
    assert texts == {"first"}


async def test_a_batch_of_tossup_starts_writes_the_rooms_together(tossup_set):
    from django.utils import timezone

    from quizsite.play import leases

    @database_sync_to_async
    def idle_rooms():
        now = timezone.now()
        out = []
        for i in range(3):
            room = leases.room_take(slug=f"n{i}", driver="me", now=now, lease=timedelta(hours=1),
                                    initial_settings={"set": "t"})
            agent = Agent.objects.create(kind=Agent.Kind.HUMAN, name=f"p{i}")
            out.append((room, services.room_join(room=room, agent_id=agent.pk, name=f"p{i}", now=now)))
        return out

    rooms = await idle_rooms()
    sqls: list[str] = []
    record = _recorder(sqls)
    await database_sync_to_async(lambda: connection.execute_wrappers.append(record))()
    try:
        outcomes = await _batched(GroupWriter(), [
            {"fn": services.room_next, "player": player,
             "kwargs": {"room": room, "player_id": player.pk, "now": timezone.now()}} for room, player in rooms])
    finally:
        await database_sync_to_async(lambda: connection.execute_wrappers.remove(record))()
    assert [o.events[-1]["type"] for o in outcomes] == ["tossup"] * 3
    writes = [s for s in sqls if not s.startswith(("SELECT", "INSERT INTO \"PLAY_CHATMESSAGE\""))]
    assert not any(s.startswith(("SAVEPOINT", "RELEASE")) for s in writes)
    if connection.vendor == "postgresql":
        assert len(writes) == 1 and writes[0].startswith('UPDATE "PLAY_ROOM"')  # three rooms, one statement
    phases = await database_sync_to_async(lambda: set(Room.objects.values_list("phase", flat=True)))()
    assert phases == {Room.Phase.READING}


async def test_joins_forwarded_by_another_process_go_to_the_group_commit_together(tossup_set):
    from quizsite.agents.services import new_guest_key
    from quizsite.play.hub import get_hub

    first = Client(room="fwd")
    await first.join("host")  # this process leads the room now
    hub = get_hub()
    actor = hub.actors["fwd"]
    before = hub.writer.batches
    replies: list[dict] = []

    async def reply(texts: list[str], join: dict) -> None:
        replies.append(join)

    for i in range(8):  # as _dispatch hands them over, one after another, from the other process
        await actor.inbox_run("join", {"guest_key": new_guest_key(), "name": f"far{i}"}, reply)
    for _ in range(200):
        if len(replies) == 8:
            break
        await asyncio.sleep(0.01)
    assert len({r["player_id"] for r in replies}) == 8
    assert hub.writer.batches - before <= 2  # one after another, they would be eight


@pytest.mark.parametrize("with_direct_write", [False, True], ids=["deferred-only", "beside-a-direct-write"])
async def test_a_deferred_work_whose_row_the_database_refuses_fails_alone(tossup_set, with_direct_write):
    """One room's unstorable row (a lone surrogate: no encoding to UTF-8) failed the statement that wrote
    every room's rows of the batch, and every ruling of the batch with it."""
    from django.utils import timezone

    from quizsite.items.models import Response

    rooms = await _reading_rooms(3)
    anyone = await database_sync_to_async(lambda: Player.objects.get(pk=rooms[0][1]))()
    writer = GroupWriter()
    for room, pid in rooms:
        await writer.run(services.room_buzz, room=room, player_id=pid, qid=room.qid, now=timezone.now())
    texts = ["wrong", "zan\ud800zibar", "wrong"]  # the consumer refuses this text; the writer must not rely on it
    calls = [{"fn": services.room_answer, "player": anyone,
              "kwargs": {"room": room, "player_id": pid, "qid": room.qid, "text": text, "now": timezone.now()}}
             for (room, pid), text in zip(rooms, texts, strict=True)]
    if with_direct_write:  # a chat line written directly in the same transaction must stand too
        calls.insert(0, {"fn": _say_depth, "player": anyone, "kwargs": {"player": anyone, "text": "direct"}})
    results = await _batched(writer, calls)
    if with_direct_write:
        assert results.pop(0) == 0  # the transaction's first direct write: no savepoint
    assert isinstance(results[1], UnicodeError)
    assert [r.events[0]["verdict"] for r in (results[0], results[2])] == ["reject", "reject"]
    rows = await database_sync_to_async(lambda: sorted(Response.objects.values_list("room", "given")))()
    assert rows == [("b0", "wrong"), ("b2", "wrong")]
    scores = await database_sync_to_async(lambda: [Player.objects.get(pk=pid).score for _, pid in rooms])()
    assert scores == [-5, 0, -5]  # the refused work's score was not added either
    chat = await database_sync_to_async(lambda: set(ChatMessage.objects.values_list("text", flat=True)))()
    assert chat == ({"first", "direct"} if with_direct_write else {"first"})
