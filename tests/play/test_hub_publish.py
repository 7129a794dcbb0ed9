"""The leader's events reach its own sockets at once and the other processes in order, and the leader
never waits for the channel layer (play/hub.py, `publish`)."""

import asyncio

import pytest

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
    hub.rooms["r"] = {Waking(), Waking()}  # type: ignore[arg-type]
    await hub.publish("r", "t", 1, ["w1"])
    for _ in range(5):
        await asyncio.sleep(0)
    assert order == ["layer", "socket", "socket"]
