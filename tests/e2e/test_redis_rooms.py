"""Two ASGI processes share one room through Redis (channel layer) and PostgreSQL (room state)."""

import asyncio
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import TOSSUPS, free_port, service_up

from .servers import REPO, app_env, asgi_server, migrate_and_import, stop, wait_http

pytestmark = [
    pytest.mark.services,
    pytest.mark.slow,
    pytest.mark.skipif(not service_up("127.0.0.1", 6379), reason="Redis is not running on 127.0.0.1:6379"),
    pytest.mark.skipif(not service_up("127.0.0.1", 5432), reason="PostgreSQL is not running on 127.0.0.1:5432"),
]
PG = "postgres://root@127.0.0.1:5432"


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory):
    """One database and two servers for the module: each test plays rooms of its own names."""
    import psycopg

    tmp_path = tmp_path_factory.mktemp("two-servers")

    name = f"thinkalike_e2e_{os.getpid()}"
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    env = app_env(
        tmp_path / "var", DATABASE_URL=f"{PG}/{name}", REDIS_URL="redis://127.0.0.1:6379/0",
        CHANNELS_PREFIX=f"e2e{os.getpid()}", FORWARDED_ALLOW_IPS="127.0.0.1",  # behind deploy/nginx.conf too
    )
    fixture = tmp_path / "e2e.jsonl"
    fixture.write_text("\n".join(json.dumps(t) for t in TOSSUPS) + "\n")
    migrate_and_import(env, fixture, "--set", "e2e")
    ports = [free_port(), free_port()]
    procs = [asgi_server(p, env, tmp_path / f"server{p}.log") for p in ports]
    try:
        for port, proc in zip(ports, procs, strict=True):
            wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        yield ports
    finally:
        for proc in procs:
            stop(proc)
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


class Socket:
    def __init__(self, ws):
        self.ws, self.frames = ws, []

    async def until(self, kind, timeout=10):
        async with asyncio.timeout(timeout):
            while True:
                frame = json.loads(await self.ws.recv())
                self.frames.append(frame)
                if frame["type"] == kind:
                    return frame


async def play(ports):
    import websockets

    query = "ms_per_word=40&answer_ms=3000&dead_ms=500&set=e2e"
    origin = "http://127.0.0.1"
    async with (
        websockets.connect(f"ws://127.0.0.1:{ports[0]}/ws/play/shared/?{query}", origin=origin) as wa,
        websockets.connect(f"ws://127.0.0.1:{ports[1]}/ws/play/shared/?{query}", origin=origin) as wb,
    ):
        a, b = Socket(wa), Socket(wb)
        await wa.send(json.dumps({"type": "join", "name": "on-one"}))
        await a.until("hello")
        await wb.send(json.dumps({"type": "join", "name": "on-two"}))
        b_id = (await b.until("hello"))["player_id"]
        await wa.send(json.dumps({"type": "next"}))
        qid = (await b.until("tossup"))["qid"]
        await b.until("words")
        await asyncio.sleep(0.3)
        await wb.send(json.dumps({"type": "buzz", "qid": qid}))
        buzz_seen_by_a = await a.until("buzz")
        assert buzz_seen_by_a["player_id"] == b_id
        await wb.send(json.dumps({"type": "answer", "qid": qid, "text": "Zanzibar"}))
        ruling = await a.until("ruling")
        assert (ruling["player_id"], ruling["verdict"]) == (b_id, "accept")
        end_a, end_b = await a.until("tossup_end"), await b.until("tossup_end")
        assert end_a["reason"] == end_b["reason"] == "answered"
        # one clock for the room: every word reached each player exactly once, in order
        for sock in (a, b):
            starts = [(f["start"], len(f["words"])) for f in sock.frames if f["type"] == "words"]
            position = 0
            for start, count in starts:
                assert start == position, starts
                position += count
            assert position == buzz_seen_by_a["word_index"]


def test_two_processes_share_a_room_through_redis(two_servers):
    asyncio.run(play(two_servers))


async def alone_then_shared(ports: list[int]) -> None:
    """A room's players all on its leader's process (a proxy that places sockets by room): its events
    never go through Redis. A player joining through the other process gets every event after its hello."""
    import redis.asyncio as redis
    import websockets

    prefix = f"e2e{os.getpid()}"
    group = f"{prefix}__group__play.room.alone"
    watcher = redis.Redis()
    pubsub = watcher.pubsub()
    await pubsub.subscribe(group)
    await pubsub.get_message(timeout=1)  # the subscribe confirmation
    query = "ms_per_word=40&answer_ms=3000&dead_ms=300&set=e2e"
    origin = "http://127.0.0.1"
    url = "ws://127.0.0.1:{}/ws/play/alone/?" + query
    # max_queue=None: these two read nothing of the second tossup, and a client whose queue is full stops
    # reading its socket, so its close would wait 10 s for a close frame it never reads.
    try:
        async with websockets.connect(url.format(ports[0]), origin=origin, max_queue=None) as w1, \
                websockets.connect(url.format(ports[0]), origin=origin, max_queue=None) as w2:
            one, two = Socket(w1), Socket(w2)
            for ws, sock, name in ((w1, one, "first"), (w2, two, "second")):
                await ws.send(json.dumps({"type": "join", "name": name}))
                await sock.until("hello")
            await w1.send(json.dumps({"type": "next"}))
            first_end = await two.until("tossup_end", timeout=30)
            published = []
            while (message := await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.5)) is not None:
                published.append(message)
            assert published == [], "a room with no player elsewhere published to Redis"
            n_words = next(f["n_words"] for f in two.frames if f["type"] == "tossup")
            assert sum(len(f["words"]) for f in two.frames if f["type"] == "words") == n_words
            assert first_end["qid"] == next(f["qid"] for f in two.frames if f["type"] == "tossup")

            async with websockets.connect(url.format(ports[1]), origin=origin) as w3:
                three = Socket(w3)
                await w3.send(json.dumps({"type": "join", "name": "elsewhere"}))
                await three.until("hello")
                await w1.send(json.dumps({"type": "next"}))
                await three.until("tossup_end", timeout=30)
                n_words = next(f["n_words"] for f in three.frames if f["type"] == "tossup")
                starts = [(f["start"], len(f["words"])) for f in three.frames if f["type"] == "words"]
                assert starts and starts[0][0] == 0, starts  # every word of the tossup, from the first
                assert sum(n for _, n in starts) == n_words
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=2)
                assert message is not None, "the room's events did not reach the other process's group"
    finally:
        await pubsub.aclose()
        await watcher.aclose()


def test_a_room_with_no_player_on_another_process_publishes_nothing(two_servers):
    asyncio.run(alone_then_shared(two_servers))


NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)


@pytest.fixture
def proxy(two_servers, tmp_path):
    """deploy/nginx.conf as shipped, its two upstream ports and its listening port replaced."""
    if NGINX is None:
        pytest.skip("nginx is not installed (.ci/run installs Debian's nginx-light)")
    conf = (REPO / "deploy" / "nginx.conf").read_text()
    conf, n = re.subn(r"server 127\.0\.0\.1:\d+;", "SERVER", conf)
    assert n == 2, "deploy/nginx.conf names two upstream servers"
    conf = conf.replace("SERVER", f"server 127.0.0.1:{two_servers[0]};", 1).replace("SERVER", f"server 127.0.0.1:{two_servers[1]};", 1)
    port = free_port()
    conf, n = re.subn(r"listen \d+;", f"listen 127.0.0.1:{port};", conf)
    assert n == 1
    prefix = tmp_path / "nginx"
    prefix.mkdir()
    (prefix / "nginx.conf").write_text(conf)
    proc = subprocess.Popen([NGINX, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def through_the_proxy(port: int) -> None:
    """Three rooms of three players, each player with its own query string: every room is played on one
    process (nothing of it crosses Redis) and every player gets every word."""
    import redis.asyncio as redis
    import websockets

    rooms = ["proxied-a", "proxied-b", "proxied-c"]
    watcher = redis.Redis()
    pubsub = watcher.pubsub()
    await pubsub.subscribe(*(f"e2e{os.getpid()}__group__play.room.{room}" for room in rooms))
    for _ in rooms:
        await pubsub.get_message(timeout=1)  # the subscribe confirmations
    sockets = []
    try:
        for room in rooms:
            for n in range(3):
                query = f"ms_per_word={30 + n}&answer_ms=3000&dead_ms=300&set=e2e"  # the hash leaves it out
                ws = await websockets.connect(f"ws://127.0.0.1:{port}/ws/play/{room}/?{query}",
                                              origin=f"http://127.0.0.1:{port}")
                sock = Socket(ws)
                sockets.append((room, sock))
                await ws.send(json.dumps({"type": "join", "name": f"{room}-{n}"}))
                await sock.until("hello")
        for room in rooms:
            await next(s for r, s in sockets if r == room).ws.send(json.dumps({"type": "next"}))
        for _, sock in sockets:
            await sock.until("tossup_end", timeout=30)
            n_words = next(f["n_words"] for f in sock.frames if f["type"] == "tossup")
            assert sum(len(f["words"]) for f in sock.frames if f["type"] == "words") == n_words
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1)
        assert message is None, f"a room's events crossed Redis: its sockets were on both processes ({message})"
    finally:
        for _, sock in sockets:
            await sock.ws.close()
        await pubsub.aclose()
        await watcher.aclose()


def test_the_shipped_proxy_config_keeps_each_room_on_one_process(proxy):
    asyncio.run(through_the_proxy(proxy))
