"""`manage.py quickstart` on an empty database comes up, loads the demo once, serves the lobby, stops on Ctrl-C."""

import re
import sqlite3
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import free_port

from .servers import REPO, app_env, start, stop, wait_http

pytestmark = pytest.mark.slow

WORKER_READY = re.compile(r"\b(?:celery|bots)@\S+ ready\.")


def test_quickstart_serves_the_lobby_and_runs_a_worker(tmp_path):
    port = free_port()
    env = app_env(tmp_path / "var")
    log = tmp_path / "quickstart.log"
    proc = start([sys.executable, "manage.py", "quickstart", "--port", str(port)], env, log)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc, timeout=90)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/play/") as resp:
            page = resp.read().decode()
        assert "Play quizbowl" in page and "Demo tossups" in page
        # quickstart announces the address once it has seen the server listen (it can see it after this
        # test does: stopping before then would end it without the line); each Celery worker prints
        # "<name>@host ready." ("database ready" is quickstart's own, early line, so it does not count)
        announced = f"http://127.0.0.1:{port}/"
        end = time.monotonic() + 60
        while not (announced in log.read_text() and len(WORKER_READY.findall(log.read_text())) >= 2):
            assert time.monotonic() < end, log.read_text()[-2000:]
            time.sleep(0.3)
    finally:
        code = stop(proc)
    assert code == 0, log.read_text()[-2000:]
    output = log.read_text()
    assert f"http://127.0.0.1:{port}/" in output and "stopped" in output
    db = sqlite3.connect(tmp_path / "var" / "db.sqlite3")
    (n_tossups,) = db.execute("select count(*) from items_item where kind='tossup'").fetchone()
    assert n_tossups >= 60
    # a second start loads nothing twice
    proc = start([sys.executable, "manage.py", "quickstart", "--port", str(port), "--no-worker"], env, log)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc, timeout=90)
    finally:
        stop(proc)
    assert db.execute("select count(*) from items_item where kind='tossup'").fetchone() == (n_tossups,)
    assert REPO.exists()


def test_ctrl_c_while_the_server_starts_stops_it_too(tmp_path):
    """Ctrl-C before the server listens: quickstart used to die of KeyboardInterrupt and leave it running."""
    env = app_env(tmp_path / "var")
    proc = start([sys.executable, "manage.py", "quickstart", "--port", str(free_port()), "--no-worker", "--no-demo"],
                 env, tmp_path / "quickstart.log")
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    server = None
    end = time.monotonic() + 90
    while server is None and time.monotonic() < end and proc.poll() is None:
        kids = children.read_text().split() if children.exists() else []
        server = int(kids[0]) if kids else None
        time.sleep(0.02)
    assert server is not None, (tmp_path / "quickstart.log").read_text()[-2000:]
    assert stop(proc) == 0, (tmp_path / "quickstart.log").read_text()[-2000:]
    assert not Path(f"/proc/{server}").exists()  # stopped and reaped by quickstart


@pytest.mark.parametrize("server", ["uvicorn", "daphne"])
def test_serve_runs_the_asgi_server_alone(tmp_path, server):
    """`manage.py serve` (production, several processes) serves pages and play sockets, and stops on Ctrl-C."""
    import asyncio
    import json

    import websockets

    from .servers import manage

    env = app_env(tmp_path / "var")
    manage(env, "migrate", "--noinput")
    port = free_port()
    proc = start([sys.executable, "manage.py", "serve", "--port", str(port), "--server", server], env,
                 tmp_path / "serve.log")
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc, timeout=90)

        async def hello() -> dict:
            async with websockets.connect(f"ws://127.0.0.1:{port}/ws/play/serve/",
                                          origin=f"http://127.0.0.1:{port}") as ws:
                await ws.send(json.dumps({"type": "join", "name": "ann"}))
                while (m := json.loads(await ws.recv()))["type"] != "hello":
                    pass
                return m

        assert asyncio.run(hello())["player_id"]
    finally:
        code = stop(proc)
    assert code == 0, (tmp_path / "serve.log").read_text()[-2000:]
