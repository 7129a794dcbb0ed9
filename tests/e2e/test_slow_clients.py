"""Clients that stop reading: they are closed by the server's ping timeout (they cannot answer a ping),
while the room goes on for everyone else and the server stays responsive. Embedded default, the real ASGI server
with the ping settings quickstart uses, shortened."""

import asyncio
import json
import time
import urllib.request

import pytest

from tests.conftest import TOSSUPS, free_port

from .servers import app_env, asgi_server, migrate_and_import, stop, wait_http

pytestmark = [pytest.mark.slow, pytest.mark.serial]
QUERY = "ms_per_word=40&answer_ms=3000&dead_ms=500&set=e2e"


@pytest.fixture
def server(tmp_path):
    env = app_env(tmp_path / "var", PLAY_MAX_CONN_PER_IP="1000")
    fixture = tmp_path / "e2e.jsonl"
    fixture.write_text("\n".join(json.dumps(t) for t in TOSSUPS) + "\n")
    migrate_and_import(env, fixture, "--set", "e2e")
    port = free_port()
    proc = asgi_server(port, env, tmp_path / "server.log", ping_interval=1, ping_timeout=1)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        yield port
    finally:
        stop(proc)


async def scenario(port: int) -> None:
    import websockets

    url, origin = f"ws://127.0.0.1:{port}/ws/play/slow/?{QUERY}", f"http://127.0.0.1:{port}"
    # max_queue=1: once one message waits unread, the client stops reading its socket (and so stops
    # answering pings), as a stalled or hostile client does.
    stalled = [await websockets.connect(url, origin=origin, max_queue=1, ping_interval=None) for _ in range(20)]
    for i, ws in enumerate(stalled):
        await ws.send(json.dumps({"type": "join", "name": f"stalled{i}"}))
    async with websockets.connect(url, origin=origin, ping_interval=None) as reader:
        await reader.send(json.dumps({"type": "join", "name": "reader"}))
        await reader.send(json.dumps({"type": "next"}))
        words, end = {}, None
        async with asyncio.timeout(30):
            while end is None:
                m = json.loads(await reader.recv())
                if m["type"] == "words":
                    words.update((m["start"] + k, w) for k, w in enumerate(m["words"]))
                elif m["type"] == "tossup_end":
                    end = m
        assert [words[i] for i in range(len(words))] == end["text"].replace(" (*)", "").split()
        started = time.monotonic()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as resp:
            assert resp.status == 200 and time.monotonic() - started < 1
        await asyncio.sleep(4)  # ping every 1 s, closed 1 s after an unanswered ping
        closed = 0
        for ws in stalled:
            try:
                async with asyncio.timeout(5):
                    while True:
                        await ws.recv()
            except websockets.ConnectionClosed:
                closed += 1
            except TimeoutError:
                pass
        assert closed == len(stalled)
        await reader.send(json.dumps({"type": "chat", "text": "still served"}))
        async with asyncio.timeout(5):
            while (m := json.loads(await reader.recv()))["type"] != "chat":
                pass


def test_clients_that_stop_reading_are_closed_and_the_room_goes_on(server):
    asyncio.run(scenario(server))
