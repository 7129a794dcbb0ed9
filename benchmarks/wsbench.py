"""Load harness for the play room: a minimal baseline server, the project's server, and a load client.

The baseline is what a play room costs at the least: a plain `websockets` server that reads the same
tossups on the same schedule to the same clients (no database, no channel layer), run in its own
process like the project's. Both are measured by the same client in the same run, so the figures are
ratios and survive a noisy machine.

Measures (ms): spread = a word's arrival at a client minus its first arrival at any client of the room;
late = arrival minus when the server's clock says the word was due (the `t` of a `words` message, in
epoch ms); buzz = buzz sent to `buzz` seen by the buzzer; ruling = answer sent to `ruling` seen.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from statistics import quantiles
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from quizsite.core.asgiserver import server_command, server_name  # noqa: E402

N_WORDS = 60
BUZZ_AT = 20  # the room's buzzer buzzes once this many words have arrived, answers wrong, reading resumes
WRONG = "definitely not the answer"
SKIPPED = ('{"type": "scores"', '{"type": "presence"')
# A hello is read for its player id alone: the project's carries the room's roster (250 players on average
# while 500 join one room), and json-decoding 500 of them took a quarter of the one load-client process's
# time (py-spy), where each real player decodes its own hello on its own machine.
HELLO = re.compile(r'^\{"type": "hello", "player_id": (\d+)')


def bench_tossups(n: int = 8, n_words: int = N_WORDS) -> list[dict[str, Any]]:
    """Tossups of one sentence (uniform pace), every word unique so arrivals can be told apart."""
    out = []
    for q in range(n):
        words = [f"q{q}w{i:03d}" for i in range(n_words)]
        out.append({"id": f"bench-{q}", "question": " ".join(words) + ".", "answer": f"<b><u>Answer{q}</u></b>",
                    "category": "Bench"})
    return out


def now_ms() -> float:
    return time.time() * 1000


# --- the minimal server ------------------------------------------------------------------------------


async def minimal_serve(port: int, tossups: list[dict[str, Any]], roster: bool = False) -> None:
    """Run the baseline server forever: join, next, buzz, answer; words on the clock, broadcast once.

    Its hello's player list is empty unless `roster`: then it lists the room's players as PROTOCOL.md's
    `hello.state.players` asks (id, name, score, online), the one part of a join the protocol requires that
    the bare baseline leaves out (`ws_load.py --minimal-roster`)."""
    from urllib.parse import parse_qsl, urlsplit

    import websockets

    rooms: dict[str, dict[str, Any]] = {}

    def room_of(slug: str, query: dict[str, str]) -> dict[str, Any]:
        if slug not in rooms:
            rooms[slug] = {"clients": set(), "ms": int(query.get("ms_per_word", 250)),
                           "dead": int(query.get("dead_ms", 5000)), "answer_ms": int(query.get("answer_ms", 8000)),
                           "qid": None, "buzz": None, "wake": asyncio.Event(), "n": 0, "next_id": 1}
        return rooms[slug]

    def broadcast(room: dict[str, Any], event: dict[str, Any]) -> None:
        websockets.broadcast(room["clients"], json.dumps(event))

    async def read(room: dict[str, Any], tossup: dict[str, Any], qid: str) -> None:
        words = tossup["question"].split()
        i, anchor = 0, time.time()
        while i < len(words):
            due = anchor + (i - room["base"]) * room["ms"] / 1000
            await asyncio.sleep(max(0.0, due - time.time()))
            if room["buzz"] is not None:  # paused: wait for the ruling, then re-anchor
                while room["buzz"] is not None:
                    room["wake"].clear()
                    await room["wake"].wait()
                anchor, room["base"] = time.time(), i
                continue
            broadcast(room, {"type": "words", "qid": qid, "start": i, "words": [words[i]], "t": int(due * 1000)})
            i += 1
        await asyncio.sleep(room["dead"] / 1000)
        broadcast(room, {"type": "tossup_end", "qid": qid, "answer": tossup["answer"], "text": tossup["question"],
                         "reason": "timeout"})
        room["qid"] = None

    async def handler(ws: Any) -> None:
        path = urlsplit(ws.request.path)
        slug = path.path.strip("/").split("/")[-1]
        room = room_of(slug, dict(parse_qsl(path.query)))
        me = None
        try:
            async for raw in ws:
                msg = json.loads(raw)
                kind = msg.get("type")
                if kind == "join":
                    me = room["next_id"]
                    room["next_id"] += 1
                    room["clients"].add(ws)
                    room.setdefault("scores", {})[me] = {"id": me, "name": msg.get("name", ""), "score": 0}
                    players = [{**p, "online": True} for p in room["scores"].values()] if roster else []
                    await ws.send(json.dumps({"type": "hello", "player_id": me, "room": slug,
                                              "state": {"players": players}}))
                elif kind == "next" and room["qid"] is None:
                    tossup = tossups[room["n"] % len(tossups)]
                    room["n"] += 1
                    room["qid"], room["base"], room["buzz"] = f"m{room['n']}", 0, None
                    broadcast(room, {"type": "tossup", "qid": room["qid"], "category": "", "n_words": len(tossup["question"].split())})
                    room["tossup"] = tossup
                    asyncio.create_task(read(room, tossup, room["qid"]))
                elif kind == "buzz" and room["qid"] == msg.get("qid") and room["buzz"] is None:
                    room["buzz"] = me
                    broadcast(room, {"type": "buzz", "qid": room["qid"], "player_id": me, "word_index": 0,
                                     "deadline_ms": room["answer_ms"]})
                elif kind == "answer" and room["buzz"] == me:
                    verdict = "accept" if msg.get("text") == room["tossup"]["answer"] else "reject"
                    points = 10 if verdict == "accept" else -5
                    broadcast(room, {"type": "ruling", "qid": room["qid"], "player_id": me, "text": msg.get("text"),
                                     "verdict": verdict, "points": points})
                    room["scores"][me]["score"] += points  # the protocol's `scores`: every player, after a change
                    players = sorted(room["scores"].values(), key=lambda p: (-p["score"], p["id"]))
                    broadcast(room, {"type": "scores", "players": players})
                    room["buzz"] = None
                    room["wake"].set()
        finally:
            room["clients"].discard(ws)

    async with websockets.serve(handler, "127.0.0.1", port, max_queue=None, ping_interval=None):
        await asyncio.Future()


# --- servers in child processes ----------------------------------------------------------------------


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of these processes so far: a measure of the server's work that the machine's
    other load moves much less than it moves latency."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))
    return total / os.sysconf("SC_CLK_TCK")


async def measured_case(pids: list[int], ports: list[int], rooms: int, per_room: int, **kwargs: Any) -> CaseResult:
    """`run_case`, with the server's CPU seconds over it."""
    before, own = cpu_seconds(pids), time.process_time()
    result = await run_case(ports, rooms, per_room, **kwargs)
    result.cpu_s, result.client_cpu_s = cpu_seconds(pids) - before, time.process_time() - own
    return result


async def connect(port: int, room: str, query: str) -> Any:
    """A load client's socket to a room (no deflate: the project serves without it)."""
    import websockets

    # proxy=None: websockets otherwise reads the proxy settings from the environment for every connection
    # (a tenth of the load client's time while 500 joined), the same for either server.
    return await websockets.connect(f"ws://127.0.0.1:{port}/ws/play/{room}/?{query}", open_timeout=60, proxy=None,
                                    origin=f"http://127.0.0.1:{port}", max_size=2**24, max_queue=None,
                                    ping_interval=None, close_timeout=2, compression=None)


async def join_phase(pids: list[int], ports: list[int], rooms: int, per_room: int, connect_at_once: int = 100,
                     prefix: str = "joins", route: str = "spread") -> tuple[float, float, int]:
    """Only the joins of a case, made as `run_case` makes them (`join_bots`): (seconds, the server's CPU
    seconds over them, players that got no hello). The sockets are closed after the clock stops."""
    query = "ms_per_word=50&dead_ms=1000&answer_ms=3000&set=bench"
    tag = f"{prefix}{int(time.time() * 1000) % 10**9}"
    bots = [Bot(room=f"{tag}-{r}", index=i) for r in range(rooms) for i in range(per_room)]
    gc.collect()
    before, t0 = cpu_seconds(pids), time.monotonic()
    failed = await join_bots(ports, bots, query, connect_at_once, route)
    took, cpu = time.monotonic() - t0, cpu_seconds(pids) - before
    await asyncio.gather(*(b.ws.close() for b in bots if b.ws is not None), return_exceptions=True)
    return took, cpu, failed


def _wait_port(port: int, proc: subprocess.Popen, timeout: float = 60, path: str | None = None) -> None:
    import socket

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server on port {port} exited with {proc.returncode}")
        try:
            if path:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2):
                    return
            else:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"port {port} did not answer within {timeout}s")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class MinimalServer:
    def __init__(self, roster: bool = False) -> None:
        self.port = free_port()
        code = ("import asyncio, contextlib, benchmarks.wsbench as b\nwith contextlib.suppress(KeyboardInterrupt): "
                f"asyncio.run(b.minimal_serve({self.port}, b.bench_tossups(), roster={roster}))")
        self.proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, start_new_session=True)
        _wait_port(self.port, self.proc)
        self.ports = [self.port]

    def close(self) -> None:
        _stop(self.proc)


PG = "postgres://root@127.0.0.1:5432"


class ProjectServer:
    """The project on a fresh var folder: `embedded` (SQLite, in-memory layer) or `services` (PostgreSQL +
    Redis), with `procs` ASGI processes (uvicorn, or daphne: `server`) sharing the rooms."""

    def __init__(self, profile: str = "embedded", procs: int = 1, extra_env: dict[str, str] | None = None,
                 server: str | None = None):
        if profile == "embedded" and procs != 1:
            raise ValueError("the embedded default is one process (in-memory channel layer)")
        self.tmp = tempfile.TemporaryDirectory(prefix="wsbench-")
        var = Path(self.tmp.name)
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
        env.update({"DJANGO_SETTINGS_MODULE": "quizsite.settings.local", "THINKALIKE_VAR_DIR": str(var), "DEBUG": "0",
                    "PYTHONUNBUFFERED": "1", "LOG_LEVEL": "WARNING",
                    # the load clients stand for players at as many addresses: no per-address limit applies
                    "PLAY_MAX_CONN_PER_IP": "100000", "PLAY_IP_MSGS_PER_S": "1e6", "PLAY_IP_JOINS_PER_S": "1e6"})
        self.db_name = ""
        if profile == "services":
            import psycopg

            self.db_name = f"wsbench_{os.getpid()}_{int(time.time() * 1000) % 10**8}"
            with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {self.db_name}")
            env.update({"DATABASE_URL": f"{PG}/{self.db_name}", "REDIS_URL": "redis://127.0.0.1:6379/0",
                        "CHANNELS_PREFIX": self.db_name})
        # the garbage-collection probe (benchmarks/gcprobe): each process logs its collections' pauses
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "benchmarks" / "gcprobe"), env.get("PYTHONPATH")]))
        env.update(extra_env or {})
        self.env = env
        manage = [sys.executable, "manage.py"]
        subprocess.run([*manage, "migrate", "--noinput"], cwd=REPO, env=env, check=True, capture_output=True)
        items = var / "bench.jsonl"
        items.write_text("\n".join(json.dumps(t) for t in bench_tossups()) + "\n")
        subprocess.run([*manage, "import_items", "--format", "quizbowl", str(items), "--set", "bench"], cwd=REPO,
                       env=env, check=True, capture_output=True)
        self.server = server_name(server)
        self.ports = [free_port() for _ in range(procs)]
        self.gc_logs = [var / f"gc-{p}.log" for p in self.ports]
        self.procs = [
            subprocess.Popen(server_command("127.0.0.1", p, server=self.server), cwd=REPO,
                             env={**env, "WSBENCH_GC_LOG": str(var / f"gc-{p}.log")},
                             stdout=(var / f"{self.server}{p}.log").open("w"), stderr=subprocess.STDOUT,
                             start_new_session=True)
            for p in self.ports
        ]
        for port, proc in zip(self.ports, self.procs, strict=True):
            _wait_port(port, proc, path="/healthz")

    def gc_pauses(self, since_ms: float, until_ms: float) -> list[tuple[int, float, int]]:
        """(generation, ms, objects collected) of the collections that ended within the window, all processes."""
        out = []
        for log in self.gc_logs:
            for line in log.read_text().splitlines() if log.exists() else []:
                at, gen, ms, collected = line.split()
                if since_ms <= float(at) <= until_ms:
                    out.append((int(gen), float(ms), int(collected)))
        return out

    def rss_mb(self) -> list[float]:
        out = []
        for proc in self.procs:
            try:
                for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        out.append(int(line.split()[1]) / 1024)
            except OSError:
                out.append(float("nan"))
        return out

    def close(self) -> None:
        for proc in self.procs:
            _stop(proc)
        if self.db_name:
            import psycopg

            with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
                conn.execute(f"DROP DATABASE IF EXISTS {self.db_name} WITH (FORCE)")
        self.tmp.cleanup()


# --- the load client ---------------------------------------------------------------------------------


@dataclass
class Bot:
    room: str
    index: int
    ms_per_word: int = 50
    port: int = 0  # the server process it is connected to
    ws: Any = None
    player_id: int | None = None
    words: dict[str, dict[int, list[float]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    due: dict[tuple[str, int], float] = field(default_factory=dict)
    n_words: dict[str, int] = field(default_factory=dict)
    ended: set[str] = field(default_factory=set)
    events: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    got: asyncio.Event = field(default_factory=asyncio.Event)
    errors: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class CaseResult:
    name: str
    players: int
    join_s: float
    spread: list[float]
    late: list[float]
    buzz: list[float]
    ruling: list[float]
    lost: int
    duplicated: int
    deliveries: int
    missing_end: int
    refused: int
    rss_mb: list[float] = field(default_factory=list)
    cpu_s: float = float("nan")  # the server processes' CPU seconds (user + system) during the case
    client_cpu_s: float = float("nan")  # the load clients' own (this process): near the case's wall time, they are the bottleneck
    worst_late_by_word: dict[int, float] = field(default_factory=dict)  # where in the tossup lateness peaks
    churned: int = 0  # side-room players who joined and left during the case (`churn_per_s`)
    in_process: list[float] = field(default_factory=list)  # spread among the clients of one server process
    hop: list[float] = field(default_factory=list)  # how much later a word's first client of another process got it

    def pct(self, values: list[float], p: int) -> float:
        if not values:
            return float("nan")
        if len(values) == 1:
            return values[0]
        return quantiles(values, n=100, method="inclusive")[p - 1]

    def row(self) -> dict[str, float]:
        return {
            "spread_p50": self.pct(self.spread, 50), "spread_p99": self.pct(self.spread, 99),
            "in_proc_p99": self.pct(self.in_process, 99), "hop_p50": self.pct(self.hop, 50), "hop_p99": self.pct(self.hop, 99),
            "late_p50": self.pct(self.late, 50), "late_p99": self.pct(self.late, 99),
            "join_s": self.join_s, "buzz_p99": self.pct(self.buzz, 99), "ruling_p99": self.pct(self.ruling, 99),
            "cpu_s": self.cpu_s, "client_cpu_s": self.client_cpu_s, "lost": self.lost, "duplicated": self.duplicated, "missing_end": self.missing_end, "refused": self.refused,
        }


async def _reader(bot: Bot) -> None:
    try:
        async for raw in bot.ws:
            t = now_ms()
            if raw.startswith(SKIPPED):  # player lists: the one load client need not parse 500 of them
                continue
            hello = HELLO.match(raw)
            msg = {"type": "hello", "player_id": int(hello[1])} if hello else json.loads(raw)
            kind = msg.get("type")
            if kind == "words":
                qid = msg["qid"]
                for k, _ in enumerate(msg["words"]):
                    index = msg["start"] + k
                    bot.words[qid][index].append(t)
                    if "t" in msg:
                        bot.due[(qid, index)] = msg["t"] + k * bot.ms_per_word  # the bench reads at a uniform pace
            elif kind == "tossup":
                bot.n_words[msg["qid"]] = msg["n_words"]
            elif kind == "tossup_end":
                bot.ended.add(msg["qid"])
            elif kind == "hello":
                bot.player_id = msg["player_id"]
            elif kind == "error":
                bot.errors.append(msg)
            if kind in ("hello", "tossup", "buzz", "ruling", "tossup_end", "words"):
                bot.events.append((t, msg))
                bot.got.set()
    except Exception:  # a closed socket ends the reader; lost words show in the counts
        pass


async def _wait_for(bot: Bot, predicate: Any, timeout: float) -> Any:
    end = time.monotonic() + timeout
    while True:
        for t, msg in reversed(bot.events):
            if predicate(msg):
                return t, msg
        left = end - time.monotonic()
        if left <= 0:
            raise TimeoutError
        bot.got.clear()
        try:
            await asyncio.wait_for(bot.got.wait(), timeout=left)
        except TimeoutError:
            pass


async def run_case(ports: list[int], rooms: int, per_room: int, **kwargs: Any) -> CaseResult:
    """Join rooms x per_room players, read one tossup in every room with one wrong buzz, and measure.

    The clients' cyclic collector is off for the case (their heap frozen out of it first): in a test
    process that has imported half the project, one full collection paused the clients for 150-240 ms,
    and the words they were reading then counted as late (the server's clock and loop were on time:
    measured with a probe in the server). Freezing alone was not enough: with the long-lived heap frozen,
    the objects a case makes (500 sockets, their messages) set off a full collection every 1.6 s, each
    pausing the clients 13-97 ms (logged with `gc.callbacks`); the word they fell on was late for every
    client, for the minimal server or the project alike, whichever it hit."""
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        return await _run_case(ports, rooms, per_room, **kwargs)
    finally:
        gc.enable()
        gc.unfreeze()


def port_for(ports: list[int], n: int, room: str, route: str = "spread") -> int:
    """The server process the n-th client connects to. `spread`: round-robin, as any proxy with no
    affinity places sockets, so every room of several players has players on every process. `room`: by a
    hash of the room, as a proxy that hashes the room's path places them (nginx `hash $uri consistent`;
    README, several processes), so each room's sockets share its leader's process."""
    if route == "room":
        return ports[zlib.crc32(room.encode()) % len(ports)]
    return ports[n % len(ports)]


async def join_bots(ports: list[int], bots: list[Bot], query: str, connect_at_once: int = 100,
                    route: str = "spread") -> int:
    """Connect every bot (`connect_at_once` at a time, over the ports by `route`: `port_for`), send its
    join and wait for its hello, reading from then on (`_reader`); the number that got no hello."""
    gate = asyncio.Semaphore(connect_at_once)
    refused = 0

    async def join(n: int, bot: Bot) -> None:
        nonlocal refused
        async with gate:
            try:
                bot.port = port_for(ports, n, bot.room, route)
                bot.ws = await connect(bot.port, bot.room, query)
            except Exception:
                refused += 1
                return
            asyncio.create_task(_reader(bot))
            await bot.ws.send(json.dumps({"type": "join", "name": f"p{bot.index}"}))
            try:
                await _wait_for(bot, lambda m: m["type"] == "hello", 60)
            except TimeoutError:
                refused += 1

    await asyncio.gather(*(join(n, b) for n, b in enumerate(bots)))
    return refused


async def _churn(ports: list[int], room: str, query: str, per_s: float, stop: asyncio.Event, route: str = "spread") -> int:
    """Players who join a side room and leave again, `per_s` a second, until `stop`: reconnects and
    players coming and going, whose closed sockets the server must clean up while the measured rooms
    read. Not measured themselves; the number that came and went."""
    done = 0

    async def visit(n: int) -> None:
        nonlocal done
        bot = Bot(room=room, index=n)
        try:
            bot.ws = await connect(port_for(ports, n, room, route), room, query)
            asyncio.create_task(_reader(bot))
            await bot.ws.send(json.dumps({"type": "join", "name": f"c{n}"}))
            await _wait_for(bot, lambda m: m["type"] == "hello", 10)
            await bot.ws.close()
            done += 1
        except Exception:  # a visitor that could not get in is no measured player's loss
            pass

    visits: list[asyncio.Task] = []
    while not stop.is_set():
        visits.append(asyncio.create_task(visit(len(visits))))
        try:
            await asyncio.wait_for(stop.wait(), timeout=1 / per_s)
        except TimeoutError:
            pass
    await asyncio.gather(*visits, return_exceptions=True)
    return done


async def _run_case(ports: list[int], rooms: int, per_room: int, *, ms_per_word: int = 50, dead_ms: int = 1000,
                    name: str = "", connect_at_once: int = 100, prefix: str = "load", churn_per_s: float = 0,
                    route: str = "spread") -> CaseResult:
    query = f"ms_per_word={ms_per_word}&dead_ms={dead_ms}&answer_ms=3000&set=bench"
    tag = f"{prefix}{int(time.time() * 1000) % 10**9}"
    bots = [Bot(room=f"{tag}-{r}", index=i, ms_per_word=ms_per_word) for r in range(rooms) for i in range(per_room)]
    t0 = time.monotonic()
    refused = await join_bots(ports, bots, query, connect_at_once, route)
    join_s = time.monotonic() - t0
    await asyncio.sleep(0.5)
    live = [b for b in bots if b.ws is not None and b.player_id is not None]
    by_room: dict[str, list[Bot]] = defaultdict(list)
    for b in live:
        by_room[b.room].append(b)
    buzz_ms: list[float] = []
    ruling_ms: list[float] = []

    async def play(room_bots: list[Bot]) -> None:
        lead = room_bots[0]
        buzzer = room_bots[1 % len(room_bots)]
        await lead.ws.send(json.dumps({"type": "next"}))
        _, tossup = await _wait_for(lead, lambda m: m["type"] == "tossup", 30)
        qid = tossup["qid"]
        await _wait_for(buzzer, lambda m: m["type"] == "words" and m["qid"] == qid and m["start"] + len(m["words"]) >= BUZZ_AT, 60)
        sent = now_ms()
        await buzzer.ws.send(json.dumps({"type": "buzz", "qid": qid}))
        t, _ = await _wait_for(buzzer, lambda m: m["type"] == "buzz" and m["qid"] == qid, 30)
        buzz_ms.append(t - sent)
        sent = now_ms()
        await buzzer.ws.send(json.dumps({"type": "answer", "qid": qid, "text": WRONG}))
        t, _ = await _wait_for(buzzer, lambda m: m["type"] == "ruling" and m["qid"] == qid, 30)
        ruling_ms.append(t - sent)
        limit = tossup["n_words"] * ms_per_word / 1000 + dead_ms / 1000 + 60
        await asyncio.gather(*(_wait_for(b, lambda m: m["type"] == "tossup_end" and m["qid"] == qid, limit)
                               for b in room_bots), return_exceptions=True)

    stop_churn = asyncio.Event()
    churn = asyncio.create_task(_churn(ports, f"{tag}-churn", query, churn_per_s, stop_churn, route)) if churn_per_s else None
    await asyncio.gather(*(play(rb) for rb in by_room.values()), return_exceptions=True)
    stop_churn.set()
    churned = await churn if churn else 0
    await asyncio.sleep(0.2)

    spread: list[float] = []
    in_process: list[float] = []  # a word's arrival minus its first arrival at a client of the same process
    hop: list[float] = []  # a process's first arrival minus the room's, for every process but the first
    late: list[float] = []
    worst: dict[int, float] = defaultdict(float)
    lost = duplicated = deliveries = missing_end = 0
    for room_bots in by_room.values():
        qids = {q for b in room_bots for q in b.n_words}
        for qid in qids:
            n = max(b.n_words.get(qid, 0) for b in room_bots)
            for index in range(n):
                arrivals = [(b, b.words[qid][index]) for b in room_bots]
                firsts = [a[0] for _, a in arrivals if a]
                if not firsts:
                    lost += len(room_bots)
                    continue
                first = min(firsts)
                by_port: dict[int, float] = {}
                for b, a in arrivals:
                    if a:
                        by_port[b.port] = min(by_port.get(b.port, a[0]), a[0])
                hop += sorted(t - first for t in by_port.values())[1:]  # the earliest process is the room's first
                for b, a in arrivals:
                    if not a:
                        lost += 1
                        continue
                    deliveries += 1
                    duplicated += len(a) - 1
                    spread.append(a[0] - first)
                    in_process.append(a[0] - by_port[b.port])
                    due = b.due.get((qid, index))
                    if due is not None:
                        late.append(a[0] - due)
                        worst[index] = max(worst[index], a[0] - due)
            missing_end += sum(1 for b in room_bots if qid not in b.ended)
    refused += len(bots) - len(live) - refused if len(bots) - len(live) > refused else 0

    async def close(bot: Bot) -> None:
        if bot.ws is not None:
            try:
                await bot.ws.close()
            except Exception:
                pass

    await asyncio.gather(*(close(b) for b in bots))
    return CaseResult(name=name, players=len(bots), join_s=join_s, spread=spread, in_process=in_process, hop=hop,
                      late=late, buzz=buzz_ms,
                      ruling=ruling_ms, lost=lost, duplicated=duplicated, deliveries=deliveries,
                      missing_end=missing_end, refused=refused, worst_late_by_word=dict(worst), churned=churned)
