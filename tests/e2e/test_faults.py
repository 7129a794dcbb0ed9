"""Faults with real servers: an ASGI process killed mid-tossup, Redis restarted mid-tossup.

Clients behave as the browser client does (static/js/room.js): they reconnect with their session
cookie to a server that answers, and on a gap in the words they ask for what they missed (`sync`).
"""

import asyncio
import json
import os
import signal
import subprocess
import time
import urllib.request

import pytest

from tests.conftest import free_port, service_up

from .servers import app_env, asgi_server, migrate_and_import, stop, wait_http

pytestmark = [
    pytest.mark.services,
    pytest.mark.slow,
    pytest.mark.serial,
    pytest.mark.skipif(not service_up("127.0.0.1", 5432), reason="PostgreSQL is not running on 127.0.0.1:5432"),
]
PG = "postgres://root@127.0.0.1:5432"
WORDS = [f"w{i:02d}" for i in range(39)] + ["w39."]  # as the reader splits "w00 ... w39."
QUERY = "ms_per_word=100&answer_ms=3000&dead_ms=1500&set=faults"


@pytest.fixture(scope="module")
def faults_db(tmp_path_factory):
    """A migrated database with the faults tossup, made once: each test's database is a copy of it
    (CREATE DATABASE ... TEMPLATE takes well under a second, a migrate and an import several)."""
    import psycopg

    name = f"thinkalike_faults_tpl_{os.getpid()}"
    tmp = tmp_path_factory.mktemp("faults_db")
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    try:
        items = tmp / "faults.jsonl"
        items.write_text(json.dumps({"id": "f1", "question": " ".join(WORDS), "answer": "Nothing", "category": "X"}) + "\n")
        migrate_and_import(app_env(tmp / "var", DATABASE_URL=f"{PG}/{name}"), items, "--set", "faults")
        yield name
    finally:
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def redis_of_our_own() -> tuple[subprocess.Popen, list[str], int]:
    """A Redis that the test may kill and restart, on a free port: its process, its command, its port."""
    port = free_port()
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    try:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), command, port
    except FileNotFoundError:
        pytest.skip("redis-server is not installed")


def database_from_template(name: str, template: str) -> str:
    """A new PostgreSQL database copied from the module's migrated template (seconds, not a migrate)."""
    import psycopg

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name} TEMPLATE {template}")
    return name


@pytest.fixture
def cluster(tmp_path, faults_db):
    """Two ASGI server processes on one PostgreSQL database and a Redis server of the test's own (it restarts it)."""
    import psycopg

    redis, redis_cmd, redis_port = redis_of_our_own()
    name = database_from_template(f"thinkalike_faults_{os.getpid()}", faults_db)
    env = app_env(tmp_path / "var", DATABASE_URL=f"{PG}/{name}", REDIS_URL=f"redis://127.0.0.1:{redis_port}/0")
    ports = [free_port(), free_port()]
    procs = [asgi_server(p, env, tmp_path / f"server{p}.log") for p in ports]
    state = {"ports": ports, "procs": procs, "redis": redis, "redis_cmd": redis_cmd, "db": f"{PG}/{name}"}
    try:
        for port, proc in zip(ports, procs, strict=True):
            wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        yield state
    finally:
        for proc in state["procs"]:
            stop(proc, timeout=5)
        state["redis"].kill()
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def session_cookie(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/play/faulty/") as resp:
        return "; ".join(c.split(";")[0] for c in resp.headers.get_all("Set-Cookie") or [])


class Player:
    """A browser-like client: remembers every word by index, syncs gaps, reconnects where it can."""

    def __init__(self, name: str, port: int):
        self.name, self.port = name, port
        self.cookie = session_cookie(port)
        self.words: dict[int, str] = {}
        self.ws = None
        self.qid = None
        self.ended = asyncio.Event()
        self.arrivals: list[float] = []
        self.closed_codes: list[int] = []
        self.player_id = None
        self.complete_at_end = False

    async def connect(self, port: int) -> None:
        import websockets

        self.port = port
        self.ws = await websockets.connect(f"ws://127.0.0.1:{port}/ws/play/faulty/?{QUERY}",
                                           origin=f"http://127.0.0.1:{port}", additional_headers={"Cookie": self.cookie})
        await self.ws.send(json.dumps({"type": "join", "name": self.name}))

    async def run(self, ports: list[int]) -> None:
        while not self.ended.is_set():
            try:
                async for raw in self.ws:
                    self.handle(json.loads(raw))
                    if self.ended.is_set():
                        return
            except Exception:
                pass
            self.closed_codes.append(getattr(self.ws, "close_code", None) or 0)
            for port in [p for p in ports if p != self.port] + [self.port]:  # like the browser: try again
                try:
                    await self.connect(port)
                    break
                except OSError:
                    await asyncio.sleep(0.1)

    def handle(self, m: dict) -> None:
        kind = m["type"]
        if kind == "hello":
            self.player_id = m["player_id"]
            st = m["state"]
            if st.get("qid"):
                self.qid = st["qid"]
                self.words.update(enumerate(st["words"]))
        elif kind == "tossup":
            self.qid = m["qid"]
        elif kind == "words" and m["qid"] == self.qid:
            if m["start"] > len(self.words):
                asyncio.ensure_future(self.ws.send(json.dumps({"type": "sync", "qid": self.qid, "have": len(self.words)})))
            self.words.update((m["start"] + k, w) for k, w in enumerate(m["words"]))
            self.arrivals.append(time.monotonic())
        elif kind == "tossup_end" and m["qid"] == self.qid:
            self.missing_at_end = [i for i in range(len(WORDS)) if self.words.get(i) != WORDS[i]]
            self.complete_at_end = not self.missing_at_end
            self.ended.set()


async def until(predicate, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise TimeoutError
        await asyncio.sleep(0.02)


async def start_room(cluster, player: type[Player] = Player, words: int = 8) -> tuple[list[Player], list[asyncio.Task]]:
    """Three players on each process (the first joiner's leads the room), reading, `words` words in."""
    ports = cluster["ports"]
    players = []
    for i, port in enumerate([ports[0]] * 3 + [ports[1]] * 3):
        p = player(f"p{i}", port)
        await p.connect(port)
        players.append(p)
        await asyncio.sleep(0.05)
    tasks = [asyncio.create_task(p.run(ports)) for p in players]
    await until(lambda: all(p.player_id for p in players), 10)
    await players[0].ws.send(json.dumps({"type": "next"}))
    await until(lambda: all(len(p.words) >= words for p in players), 10)
    return players, tasks


async def kill_the_leader(cluster) -> None:
    players, tasks = await start_room(cluster)
    killed_at = time.monotonic()
    os.kill(cluster["procs"][0].pid, signal.SIGKILL)  # the process that leads the room, and holds 3 of the sockets
    cluster["procs"][0].wait()
    survivors = players[3:]
    await until(lambda: all(p.arrivals and p.arrivals[-1] > killed_at for p in survivors), 10)
    resumed = max(next(t for t in p.arrivals if t > killed_at) for p in survivors) - killed_at
    try:
        await asyncio.wait_for(asyncio.gather(*(p.ended.wait() for p in players)), 20)
    except TimeoutError:
        raise AssertionError([(p.name, p.port, p.ended.is_set(), len(p.words), p.closed_codes, p.player_id) for p in players]) from None
    for t in tasks:
        t.cancel()
    assert resumed < 2.0, f"reading resumed {resumed:.2f} s after the leader died"
    assert all(p.complete_at_end for p in players), [p.missing_at_end for p in players]
    assert all(p.port == cluster["ports"][1] for p in players)  # the others reconnected to the survivor


def test_killing_the_leading_process_mid_tossup(cluster):
    asyncio.run(kill_the_leader(cluster))


async def restart_redis(cluster) -> None:
    players, tasks = await start_room(cluster)
    cluster["redis"].kill()
    cluster["redis"].wait()
    await asyncio.sleep(0.5)
    cluster["redis"] = subprocess.Popen(cluster["redis_cmd"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    await asyncio.wait_for(asyncio.gather(*(p.ended.wait() for p in players)), 30)
    for t in tasks:
        t.cancel()
    assert all(p.complete_at_end for p in players), [p.missing_at_end for p in players]
    # The room goes on after Redis is back: a second tossup reaches both processes' players.
    for p in players:
        p.ended.clear()
        p.words.clear()
    tasks = [asyncio.create_task(p.run(cluster["ports"])) for p in players]
    await players[0].ws.send(json.dumps({"type": "next"}))
    await asyncio.wait_for(asyncio.gather(*(p.ended.wait() for p in players)), 30)
    for t in tasks:
        t.cancel()
    assert all(p.complete_at_end for p in players)


def test_redis_restarted_mid_tossup(cluster):
    asyncio.run(restart_redis(cluster))


async def cut_the_database(cluster) -> None:
    """Every server connection to the database is killed mid-tossup: the next writes fail with a clear
    error or succeed on a fresh connection, nothing is half-written, and the room goes on."""
    import psycopg

    players, tasks = await start_room(cluster)
    with psycopg.connect(cluster["db"], autocommit=True) as conn:
        killed = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        ).fetchone()[0]
    assert killed >= 2  # both servers had connections open (persistent connections)
    buzzer = players[4]
    rulings: list[dict] = []
    original = buzzer.handle

    def record(m: dict) -> None:
        if m["type"] in ("ruling", "error", "buzz"):
            rulings.append(m)
        original(m)

    buzzer.handle = record
    for _ in range(20):  # a buzz right after the cut may be refused with a clear error; then it works
        await buzzer.ws.send(json.dumps({"type": "buzz", "qid": buzzer.qid}))
        await until(lambda: rulings and rulings[-1]["type"] in ("buzz", "error"), 5)
        if rulings[-1]["type"] == "buzz":
            break
        assert rulings[-1]["code"] in ("unavailable", "busy", "buzzer_taken"), rulings[-1]  # never server_error
        await asyncio.sleep(0.2)
    assert rulings[-1]["type"] == "buzz"
    await buzzer.ws.send(json.dumps({"type": "answer", "qid": buzzer.qid, "text": "something else"}))
    await until(lambda: rulings[-1]["type"] == "ruling", 5)
    await asyncio.wait_for(asyncio.gather(*(p.ended.wait() for p in players)), 30)
    for t in tasks:
        t.cancel()
    assert all(p.complete_at_end for p in players), [p.missing_at_end for p in players]
    with psycopg.connect(cluster["db"]) as conn:
        rows = conn.execute("SELECT given, verdict FROM items_response WHERE room = 'faulty'").fetchall()
    assert rows == [("something else", "reject")]  # one ruling told, one row: nothing lost, nothing doubled


def test_database_connections_cut_mid_tossup(cluster):
    asyncio.run(cut_the_database(cluster))
