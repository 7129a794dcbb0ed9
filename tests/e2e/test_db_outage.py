"""The database unreachable for a few seconds under two servers (a TCP proxy in front of PostgreSQL
drops every connection and refuses new ones): players' commands meanwhile answer `unavailable` (they
got `server_error`), the servers' logs say so in a few warning lines (they collected ~65 tracebacks),
and the room recovers with nothing lost, doubled or half-written."""

import asyncio
import json
import os
import threading
import time

import pytest

from tests.conftest import free_port, service_up

from .servers import app_env, asgi_server, stop, wait_http
from .test_faults import PG, Player, database_from_template, faults_db, redis_of_our_own, start_room, until  # noqa: F401  (faults_db: the module's template database)

pytestmark = [
    pytest.mark.services,
    pytest.mark.slow,
    pytest.mark.serial,
    pytest.mark.skipif(not service_up("127.0.0.1", 5432), reason="PostgreSQL is not running on 127.0.0.1:5432"),
]
QUERY = "ms_per_word=150&answer_ms=3000&dead_ms=1500&set=faults"  # 6 s of reading: the outage fits inside
OUTAGE_S = 3.0


class Proxy:
    """A TCP proxy to PostgreSQL on a thread of its own; `down()` aborts every connection through it and
    refuses new ones until `up()`."""

    def __init__(self, port: int, target: tuple[str, int] = ("127.0.0.1", 5432)):
        self.port, self.target = port, target
        self.loop = asyncio.new_event_loop()
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.up()

    def _call(self, coro) -> None:  # type: ignore[no-untyped-def]
        asyncio.run_coroutine_threadsafe(coro, self.loop).result(10)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except Exception:
            pass
        finally:
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self.writers |= {writer, up_writer}
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _up(self) -> None:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, reuse_address=True)

    async def _down(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.writers):
            writer.transport.abort()
        self.writers.clear()

    def up(self) -> None:
        self._call(self._up())

    def down(self) -> None:
        self._call(self._down())

    def close(self) -> None:
        self.down()
        self.loop.call_soon_threadsafe(self.loop.stop)


class SlowPlayer(Player):
    async def connect(self, port: int) -> None:
        import websockets

        self.port = port
        self.ws = await websockets.connect(f"ws://127.0.0.1:{port}/ws/play/faulty/?{QUERY}",
                                           origin=f"http://127.0.0.1:{port}", additional_headers={"Cookie": self.cookie})
        await self.ws.send(json.dumps({"type": "join", "name": self.name}))


@pytest.fixture
def cluster(tmp_path, faults_db):  # noqa: F811
    """Two ASGI servers on PostgreSQL through the proxy, and a Redis server of the test's own."""
    import psycopg

    redis, _, redis_port = redis_of_our_own()
    name = database_from_template(f"thinkalike_outage_{os.getpid()}", faults_db)
    proxy = Proxy(free_port())
    env = app_env(tmp_path / "var", DATABASE_URL=f"postgres://root@127.0.0.1:{proxy.port}/{name}",
                  REDIS_URL=f"redis://127.0.0.1:{redis_port}/0")
    ports = [free_port(), free_port()]
    logs = [tmp_path / f"server{p}.log" for p in ports]
    procs = [asgi_server(p, env, log) for p, log in zip(ports, logs, strict=True)]
    try:
        for port, proc in zip(ports, procs, strict=True):
            wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        yield {"ports": ports, "db": f"{PG}/{name}", "proxy": proxy, "logs": logs}
    finally:
        for proc in procs:
            stop(proc, timeout=5)
        redis.kill()
        proxy.close()
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


class Recorder:
    """The buzz, ruling and error frames one player receives, in order."""

    def __init__(self, player: Player):
        self.frames: list[dict] = []
        original = player.handle

        def handle(m: dict) -> None:
            if m["type"] in ("buzz", "ruling", "error"):
                self.frames.append(m)
            original(m)

        player.handle = handle  # type: ignore[method-assign]

    async def ask(self, player: Player, message: dict, kinds: tuple[str, ...]) -> dict:
        """Send `message`; the first of `kinds` (or an error) that answers it."""
        before = len(self.frames)
        await player.ws.send(json.dumps(message))
        await until(lambda: any(f["type"] in (*kinds, "error") for f in self.frames[before:]), 8)
        return next(f for f in self.frames[before:] if f["type"] in (*kinds, "error"))


async def outage(cluster) -> None:
    import psycopg

    players, tasks = await start_room(cluster, SlowPlayer, words=4)
    local, remote = players[1], players[4]  # on the leader's process, and on the other (a forwarded command)
    recorders = {p.name: Recorder(p) for p in (local, remote)}

    cluster["proxy"].down()
    down_at = time.monotonic()
    await asyncio.sleep(0.3)
    during = [await recorders[p.name].ask(p, {"type": "buzz", "qid": p.qid}, ("buzz",)) for p in (local, remote)]
    assert time.monotonic() - down_at < OUTAGE_S  # they were answered during the outage
    assert [(f["type"], f.get("code")) for f in during] == [("error", "unavailable")] * 2, during
    await asyncio.sleep(max(0.0, OUTAGE_S - (time.monotonic() - down_at)))
    cluster["proxy"].up()

    # The room recovers: a buzz goes through (the first ones may still meet a connection that died in
    # the outage, or the room changing leaders), and its answer is ruled.
    buzzer, refusals = remote, []
    for _ in range(30):
        answer = await recorders[buzzer.name].ask(buzzer, {"type": "buzz", "qid": buzzer.qid}, ("buzz",))
        if answer["type"] == "buzz":
            break
        refusals.append(answer["code"])
        await asyncio.sleep(0.2)
    assert answer["type"] == "buzz", refusals
    assert set(refusals) <= {"unavailable", "busy"}, refusals  # never server_error
    ruling = await recorders[buzzer.name].ask(buzzer, {"type": "answer", "qid": buzzer.qid, "text": "something else"},
                                              ("ruling",))
    assert ruling["type"] == "ruling", ruling
    try:
        await asyncio.wait_for(asyncio.gather(*(p.ended.wait() for p in players)), 30)
    except TimeoutError:
        raise AssertionError([(p.name, p.ended.is_set(), len(p.words), p.closed_codes) for p in players]) from None
    for t in tasks:
        t.cancel()
    assert all(p.complete_at_end for p in players), [p.missing_at_end for p in players]
    with psycopg.connect(cluster["db"]) as conn:
        rows = conn.execute("SELECT given, verdict, points FROM items_response WHERE room = 'faulty'").fetchall()
        scores = conn.execute("SELECT p.score FROM play_player p JOIN play_room r ON r.id = p.room_id "
                              "WHERE r.slug = 'faulty'").fetchall()
    assert [r[:2] for r in rows] == [("something else", "reject")]  # one ruling told, one row
    assert sum(s for (s,) in scores) == rows[0][2]  # its points added once, and no other score written

    for log in cluster["logs"]:
        text = log.read_text()
        assert "Traceback" not in text, text[-3000:]
        warnings = [line for line in text.splitlines() if "the database is unreachable" in line]
        assert len(warnings) <= 20, "\n".join(warnings)  # a few lines per kind of failure, not one per message


def test_the_database_unreachable_for_a_moment(cluster):
    asyncio.run(outage(cluster))
