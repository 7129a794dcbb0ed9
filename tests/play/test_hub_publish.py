"""The leader's events reach its own sockets at once and the other processes in order, and the leader
never waits for the channel layer (play/hub.py, `publish`); a room no other process holds players of
publishes nothing (`Hub.shared`)."""

import asyncio

import pytest
from django.utils import timezone

from quizsite.play.hub import Hub, group_name

pytestmark = pytest.mark.asyncio


class Socket:
    def __init__(self) -> None:
        self.pushed: list[str] = []

    def wants(self, term: str, seq: int) -> bool:
        return True

    def push(self, text: str) -> None:
        self.pushed.append(text)


class SlowLayer:
    """A channel layer whose sends wait until the test lets them through (Redis slow or restarting)."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.sent: list[tuple[str, int]] = []

    async def group_send(self, group: str, message: dict) -> None:
        await self.gate.wait()
        self.sent.append((group, message["seq"] if "seq" in message else [e["seq"] for e in message["events"]]))


async def test_events_go_to_this_process_at_once_and_to_the_layer_in_each_rooms_order():
    hub = Hub()
    hub.local_only, hub.layer = False, SlowLayer()
    hub.shared.update({"r", "s"})  # rooms with players on other processes
    here = Socket()
    hub.rooms["r"] = {here}  # type: ignore[arg-type]
    for seq in (1, 2, 3):  # would hang if publish waited for the layer
        await asyncio.wait_for(hub.publish("r", "t", seq, [f"w{seq}"]), 1)
    await asyncio.wait_for(hub.publish("s", "t", 1, ["other room"]), 1)
    assert here.pushed == ["w1", "w2", "w3"] and hub.layer.sent == []
    hub.layer.gate.set()
    for _ in range(20):
        await asyncio.sleep(0)
    # The first went alone; the two that queued behind it went as one message, in order.
    assert [seq for group, seq in hub.layer.sent if group == group_name("r")] == [1, [2, 3]]
    assert (group_name("s"), 1) in hub.layer.sent
    assert hub.outgoing == {}  # the senders finished and left nothing behind


async def test_a_layer_that_fails_costs_a_warning_not_the_room(caplog):
    class DownLayer:
        async def group_send(self, group: str, message: dict) -> None:
            raise ConnectionError("Redis is restarting")

    hub = Hub()
    hub.local_only, hub.layer = False, DownLayer()
    hub.shared.add("r")
    here = Socket()
    hub.rooms["r"] = {here}  # type: ignore[arg-type]
    await hub.publish("r", "t", 1, ["w1"])
    await hub.publish("r", "t", 2, ["w2"])
    for _ in range(20):
        await asyncio.sleep(0)
    assert here.pushed == ["w1", "w2"]
    assert sum("not published" in r.getMessage() for r in caplog.records) >= 1


async def test_a_batch_of_events_from_another_process_reaches_the_sockets_in_order():
    hub = Hub()
    hub.channel = "here"
    here = Socket()
    hub.rooms["r"] = {here}  # type: ignore[arg-type]
    events = [{"type": "play.event", "slug": "r", "term": "t", "seq": n, "texts": [f"w{n}"], "origin": "leader"}
              for n in (1, 2)]
    await hub._dispatch({"type": "play.events", "origin": "leader", "events": events})
    await hub._dispatch({"type": "play.events", "origin": "here", "events": events})  # our own: sent already
    assert here.pushed == ["w1", "w2"]


async def test_the_other_processes_get_a_word_before_this_process_writes_its_own_sockets():
    """The room's sender runs ahead of the socket writes that the fan-out wakes: in a room of 500 over two
    processes, the other process's 250 players otherwise waited for this one's 250 writes (hop p50 10-13
    ms against 3 ms in `benchmarks/ws_load.py --profile services --procs 2 --cases 1x500`)."""
    order: list[str] = []

    class Waking(Socket):
        def push(self, text: str) -> None:  # as a consumer's outbox does: its send task runs later
            super().push(text)
            asyncio.get_running_loop().call_soon(order.append, "socket")

    class Layer:
        async def group_send(self, group: str, message: dict) -> None:
            order.append("layer")

    hub = Hub()
    hub.local_only, hub.layer = False, Layer()
    hub.shared.add("r")
    hub.rooms["r"] = {Waking(), Waking()}  # type: ignore[arg-type]
    await hub.publish("r", "t", 1, ["w1"])
    for _ in range(5):
        await asyncio.sleep(0)
    assert order == ["layer", "socket", "socket"]


class RecordingLayer:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict]] = []
        self.replies: list[tuple[str, dict]] = []

    async def group_send(self, group: str, message: dict) -> None:
        self.sent.append((group, message))

    async def send(self, channel: str, message: dict) -> None:
        self.replies.append((channel, message))


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_a_room_no_other_process_holds_players_of_publishes_nothing():
    hub = Hub()
    hub.local_only, hub.layer = False, RecordingLayer()
    here = Socket()
    hub.rooms["r"] = {here}  # type: ignore[arg-type]
    await hub.publish("r", "t", 1, ["w1"])
    await settle()
    assert here.pushed == ["w1"] and hub.layer.sent == []


async def test_a_command_forwarded_by_another_process_shares_the_room_before_it_runs():
    """A player on another process joins through a forwarded command: from then on, before its hello,
    the room's events go through the layer, so that player misses none of them."""
    hub = Hub()
    hub.local_only, hub.layer = False, RecordingLayer()
    shared_when_run: list[bool] = []

    class Actor:
        slug = "r"

        async def inbox_run(self, kind: str, payload: dict, reply) -> None:
            shared_when_run.append("r" in hub.shared)
            await hub.publish("r", "t", 1, ["presence"])

    hub.actors["r"] = Actor()  # type: ignore[assignment]
    await hub._remote_command({"type": "play.command", "slug": "r", "kind": "join", "payload": {"name": "x"},
                               "conn": 7, "reply_to": "elsewhere"})
    await settle()
    assert shared_when_run == [True]
    assert [message["texts"] for _, message in hub.layer.sent] == [["presence"]]


async def test_a_room_taken_with_players_online_elsewhere_is_shared_from_the_start():
    """A leader died: the process that takes its room over cannot know which other processes hold its
    players' sockets, only that they are online; so their events go through the layer. A room whose
    online players are all held here stays off it."""
    from quizsite.play.models import Room

    hub = Hub()
    hub.local_only, hub.layer = False, RecordingLayer()
    mine = Socket()
    mine.player_id = 1  # type: ignore[attr-defined]
    hub.rooms["mine"] = {mine}  # type: ignore[arg-type]
    players = {1: {"id": 1, "name": "a", "score": 0, "bot": False}, 2: {"id": 2, "name": "b", "score": 0, "bot": False}}
    now = timezone.now()
    actors = [hub._lead((Room(pk=1, slug="mine"), dict(players), {1}, {1: 1, 2: 2}), now),
              hub._lead((Room(pk=2, slug="theirs"), dict(players), {1, 2}, {1: 1, 2: 2}), now),
              hub._lead((Room(pk=3, slug="new"), {}, set(), {}), now)]
    try:
        assert hub.shared == {"theirs"}
        actors[1].stopped = True
        hub.actor_stopped(actors[1])
        assert hub.shared == set()
    finally:
        for actor in actors:
            actor.task.cancel()
