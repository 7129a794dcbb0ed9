"""Connection caps across ASGI processes (play/caps.py), on a real Redis."""

import asyncio
import secrets
import time
from dataclasses import dataclass

import pytest

from quizsite.play import caps as caps_module
from quizsite.play.caps import SharedCaps, ip_field, session_field
from quizsite.play.hub import Hub
from tests.conftest import service_up

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.skipif(not service_up("127.0.0.1", 6379), reason="Redis is not running on 127.0.0.1:6379"),
]
REDIS = "redis://127.0.0.1:6379/0"


@pytest.fixture
async def processes():
    prefix = f"test-caps-{secrets.token_hex(4)}"
    made: list[SharedCaps] = []

    def make(name: str) -> SharedCaps:
        made.append(SharedCaps(REDIS, prefix, name))
        return made[-1]

    yield make
    for c in made:
        await c.close()


async def test_a_process_sees_what_the_others_hold_and_forgets_a_process_that_left(processes):
    a, b = processes("a"), processes("b")
    for _ in range(3):
        a.count(ip_field("10.0.0.1"), 1)
    a.count(session_field("S"), 1)
    await a.publish()
    assert await b.others([ip_field("10.0.0.1"), session_field("S"), ip_field("10.0.0.2")]) == [3, 1, 0]
    assert await a.others([ip_field("10.0.0.1")]) == [0]  # its own sockets are counted locally, not twice
    await a.close()
    assert await b.others([ip_field("10.0.0.1")]) == [3]  # read less than a period ago: not read again
    await asyncio.sleep(caps_module.PUBLISH_EVERY_S)
    assert await b.others([ip_field("10.0.0.1")]) == [0]


async def test_sockets_admitted_together_share_one_reading_of_the_others(processes):
    a, b = processes("a"), processes("b")
    a.count(ip_field("10.0.0.1"), 2)
    await a.publish()
    calls = 0
    zrange = b.redis.zrangebyscore

    async def counted(*args, **kwargs):
        nonlocal calls
        calls += 1
        return await zrange(*args, **kwargs)

    b.redis.zrangebyscore = counted
    got = await asyncio.gather(*(b.others([ip_field("10.0.0.1")]) for _ in range(50)))
    assert got == [[2]] * 50 and calls == 1


async def test_a_process_that_stopped_publishing_stops_counting(processes):
    a, b = processes("a"), processes("b")
    a.count(ip_field("10.0.0.1"), 5)
    await a.publish()
    await a.redis.zadd(a.procs_key, {"a": time.time() - caps_module.TTL_S - 1})  # its last beat, long ago
    assert await b.others([ip_field("10.0.0.1")]) == [0]


@dataclass(eq=False)
class FakeConn:
    conn_id: int
    ip: str = "10.9.9.9"
    session_key: str = ""
    slug: str = "r"
    player_id: int | None = None


async def test_the_cap_counts_every_process_sockets(processes, settings):
    settings.PLAY_MAX_CONN_PER_IP = 4
    elsewhere = processes("elsewhere")
    elsewhere.count(ip_field("10.9.9.9"), 3)
    await elsewhere.publish()
    hub = Hub()
    hub.caps = processes("here")
    first, second = FakeConn(1), FakeConn(2)
    assert hub.register(first) == "" and await hub.admit(first) == ""  # 1 here + 3 elsewhere = the cap
    assert hub.register(second) == ""  # this process alone would let it in...
    assert await hub.admit(second) == "too many connections from your address"  # ...all of them do not
    await hub.close()
