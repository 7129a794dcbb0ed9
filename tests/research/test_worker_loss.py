"""A Celery worker dies (or freezes) during a fit, for real: worker subprocesses on the filesystem broker,
signals sent to them, and a Django process that looks at the fit the way a researcher would.

Each test starts its own worker(s) against one SQLite database, made once for the module with a small
item bank and an active fit (A). Heartbeat every 0.5 s, a worker counts as lost after 3 s of silence.
A fit asked for >= 1000 epochs sleeps TEST_EPOCH_DELAY per epoch in these workers (fault/slow_worker.py),
so it is surely still running when the signal arrives.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ..conftest import REPO, service_up
from .test_worker import _env, tiny_caimira

# Not `serial`: its bounds are deadlines (lost after 3 s, SLACK_S for start-up and a loaded machine), not
# latencies; it runs beside one other test file (pyproject.toml's -n 2) as it ran beside other work before.
pytestmark = [pytest.mark.slow]
FAULT = Path(__file__).parent / "fault"
HEARTBEAT_S, LOST_AFTER_S = 0.5, 3.0
SLACK_S = 4.0  # polling, process start-up and a loaded machine
FINISHED = ["succeeded", "failed", "cancelled"]
SLOW = ["--epochs", "5000"]  # slowed by the test workers: about 0.1 s per epoch
FAST_EPOCHS = ["--epochs", "1500"]  # same fit, not slowed, in a worker without TEST_EPOCH_DELAY


class Driver:
    """The Django process of fault/driver.py: one JSON command per line, one answer per line."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        self.proc = subprocess.Popen([sys.executable, str(FAULT / "driver.py")], cwd=REPO, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log.open("w"))

    def __call__(self, op: str, limit_s: float = 180, **args: Any) -> Any:
        assert self.proc.stdin and self.proc.stdout
        watchdog = threading.Timer(limit_s, self.proc.kill)
        watchdog.start()
        try:
            self.proc.stdin.write(json.dumps({"op": op, "args": args}) + "\n")
            self.proc.stdin.flush()
            while True:
                line = self.proc.stdout.readline()
                if not line:
                    raise RuntimeError(f"the driver died during {op}:\n{self.log.read_text()[-3000:]}")
                if line.startswith("@@ "):
                    answer = json.loads(line[3:])
                    break
        finally:
            watchdog.cancel()
        assert answer["ok"], answer["error"]
        return answer["value"]

    def start_fit(self, *args: str) -> int:
        out = self("manage", args=["fit_caimira", "--dims", "2", "--embedder", "hashing-16", *args])
        return int(re.match(r"fit (\d+) ", out).group(1))  # type: ignore[union-attr]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class World:
    def __init__(self, tmp: Path, **env: str) -> None:
        self.tmp = tmp
        self.env = {**_env(tmp, f"sqlite:///{tmp / 'db.sqlite3'}"), "HF_HUB_OFFLINE": "1", "LOG_LEVEL": "INFO",
                    "RESEARCH_FIT_HEARTBEAT_SECONDS": str(HEARTBEAT_S), "RESEARCH_FIT_LOST_AFTER_SECONDS": str(LOST_AFTER_S),
                    **env}
        self.driver = Driver(self.env, tmp / "driver.log")
        self.driver("setup", data=str(tiny_caimira(tmp / "data")))
        out = self.driver("manage", args=["fit_caimira", "--wait", "--dims", "2", "--epochs", "30", "--embedder", "hashing-16",
                                          "--label", "A"])
        self.active = int(re.match(r"fit (\d+): running here", out).group(1))  # type: ignore[union-attr]
        self.workers: list[subprocess.Popen] = []

    def worker(self, name: str, *, pool: str = "solo", delay: float = 0.1, **env: str) -> subprocess.Popen:
        cmd = [sys.executable, str(FAULT / "slow_worker.py"), f"--pool={pool}", "--loglevel=INFO", "--without-gossip",
               "--without-mingle", "--without-heartbeat", "-n", f"{name}@%h"]
        if pool == "prefork":
            cmd.append("--concurrency=1")
        proc = subprocess.Popen(cmd, cwd=REPO, env={**self.env, "TEST_EPOCH_DELAY": str(delay), **env},
                                stdout=(self.tmp / f"{name}.log").open("w"), stderr=subprocess.STDOUT, start_new_session=True)
        self.workers.append(proc)
        return proc

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text()[-4000:]

    def wait_log(self, name: str, text: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.log(name) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert text in self.log(name), self.log(name)

    def stop_workers(self) -> None:
        for proc in self.workers:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGCONT)
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.workers:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.workers.clear()

    def running(self, fit_id: int, log: str) -> dict[str, Any]:
        """Wait until the fit is in its epochs (in whichever worker took it)."""
        row = self.driver("wait", fit_id=fit_id, until=["running"], phase="fitting", timeout=120)["row"]
        assert row["status"] == "running" and row["progress"]["phase"] == "fitting", f"{row}\n{self.log(log)}"
        return row

    def assert_active_untouched(self, *lost: int) -> None:
        assert self.driver("row", fit_id=self.active)["is_active"]
        for fit_id in lost:
            row = self.driver("row", fit_id=fit_id)
            assert not row["is_active"] and row["n_agents"] == 0, row


@pytest.fixture(scope="module")
def world(tmp_path_factory):  # type: ignore[no-untyped-def]
    w = World(tmp_path_factory.mktemp("worker_loss"))
    yield w
    w.stop_workers()
    w.driver.close()


@pytest.fixture
def fresh(world):  # type: ignore[no-untyped-def]
    yield world
    world.stop_workers()


def kill_group(proc: subprocess.Popen) -> float:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return time.time()


def test_sigkilled_worker_fit_fails_on_the_next_page_view(fresh):
    """The embedded default's worker (solo pool) is SIGKILLed mid-fit: the fit's page shows it failed, and why."""
    w = fresh
    worker = w.worker("w1")
    fit = w.driver.start_fit(*SLOW, "--label", "killed")
    w.running(fit, "w1")
    killed_at = kill_group(worker)
    assert w.driver("row", fit_id=fit)["status"] == "running"  # nobody has looked yet
    seen = w.driver("wait", fit_id=fit, until=FINISHED, timeout=LOST_AFTER_S + SLACK_S, path=f"/research/fits/{fit}/")
    row = seen["row"]
    assert row["status"] == "failed", row
    assert re.match(r"worker lost: process \d+ on .* \(w1@.*\) is gone", row["error"]), row["error"]
    assert seen["at"] - killed_at < LOST_AFTER_S + SLACK_S
    page = w.driver("get", path=f"/research/fits/{fit}/")["text"]
    assert '<span class="status failed" id="status-label">Failed</span>' in page and "worker lost: process" in page
    assert "worker lost: process" in w.driver("get", path="/research/fits/")["text"]
    api = json.loads(w.driver("get", path=f"/api/fits/{fit}/")["text"])
    assert api["status"] == "failed" and api["error"] == row["error"]
    w.assert_active_untouched(fit)


def test_sigkilled_pool_child_fit_fails_and_the_worker_carries_on(fresh):
    """A prefork worker's pool child is SIGKILLed: the task comes back (acks_late, reject_on_worker_lost), the
    redelivery finds the run's process gone and fails it; the worker then runs and cancels other fits."""
    w = fresh
    worker = w.worker("w2", pool="prefork")
    fit = w.driver.start_fit(*SLOW, "--label", "child killed")
    child = w.running(fit, "w2")["worker"]["pid"]
    assert child != worker.pid
    os.kill(child, signal.SIGKILL)
    killed_at = time.time()
    seen = w.driver("wait", fit_id=fit, until=FINISHED, timeout=LOST_AFTER_S + SLACK_S)  # no page views: the worker does it
    assert seen["row"]["status"] == "failed" and f"worker lost: process {child} on" in seen["row"]["error"], seen["row"]
    assert seen["at"] - killed_at < LOST_AFTER_S + SLACK_S
    assert worker.poll() is None, w.log("w2")
    w.assert_active_untouched(fit)

    # The worker lives on: cancelling a fit it runs stops that fit at its next progress step.
    live = w.driver.start_fit(*SLOW, "--no-activate", "--label", "cancel me")
    w.running(live, "w2")
    assert "Cancelling" in w.driver("post", path=f"/research/fits/{live}/cancel/")["text"]
    row = w.driver("wait", fit_id=live, until=FINISHED, timeout=5)["row"]
    assert row["status"] == "cancelled" and row["error"] == "cancelled by a researcher", row

    # Its child dies while the parent cannot notice (stopped): cancel is at once, and the redelivery that
    # follows when the parent resumes finds the run cancelled and does nothing.
    gone = w.driver.start_fit(*SLOW, "--no-activate", "--label", "cancel a dead one")
    child = w.running(gone, "w2")["worker"]["pid"]
    os.kill(worker.pid, signal.SIGSTOP)
    try:
        os.kill(child, signal.SIGKILL)
        time.sleep(0.3)
        assert "Cancelled." in w.driver("post", path=f"/research/fits/{gone}/cancel/")["text"]
        row = w.driver("row", fit_id=gone)
        assert row["status"] == "cancelled" and row["error"].startswith(f"cancelled (worker lost: process {child} on"), row
    finally:
        os.kill(worker.pid, signal.SIGCONT)
    w.wait_log("w2", f"fit {gone}: nothing to do for this delivery (it is cancelled)")
    assert w.driver("row", fit_id=gone)["error"] == row["error"]
    w.assert_active_untouched(fit, gone)


def test_frozen_worker_fit_fails_after_the_bound_and_never_writes_again(fresh):
    """A worker that stops answering (SIGSTOP; think of a hung host) is judged by its heartbeat alone; when it
    wakes up it finds the run taken and stops without writing."""
    w = fresh
    worker = w.worker("w3")
    fit = w.driver.start_fit(*SLOW, "--label", "frozen")
    w.running(fit, "w3")
    os.killpg(worker.pid, signal.SIGSTOP)
    stopped_at = time.time()
    seen = w.driver("wait", fit_id=fit, until=FINISHED, timeout=LOST_AFTER_S + SLACK_S, path=f"/research/fits/{fit}/progress.json")
    row = seen["row"]
    assert row["status"] == "failed" and re.match(r"worker lost: no heartbeat for \d+ s \(limit 3 s\) from process", row["error"]), row
    assert LOST_AFTER_S - HEARTBEAT_S - 0.5 < seen["at"] - stopped_at < LOST_AFTER_S + SLACK_S
    os.killpg(worker.pid, signal.SIGCONT)
    w.wait_log("w3", f"fit {fit}: attempt 1 no longer owns the run")
    assert w.driver("row", fit_id=fit)["error"] == row["error"]
    w.assert_active_untouched(fit)


def test_restarted_worker_picks_up_a_killed_fit_when_retries_are_on(fresh):
    """RESEARCH_FIT_RETRY_ON_WORKER_LOSS: the worker started after the SIGKILL reaps the lost fit at its start,
    queues it again and runs it to the end, as attempt 2."""
    w = fresh
    retry = {"RESEARCH_FIT_RETRY_ON_WORKER_LOSS": "1", "RESEARCH_FIT_MAX_RETRIES": "1"}
    first = w.worker("w4", **retry)
    fit = w.driver.start_fit(*FAST_EPOCHS, "--no-activate", "--label", "retried")
    w.running(fit, "w4")
    kill_group(first)
    w.worker("w5", delay=0, **retry)  # the restarted worker, its fits not slowed down
    row = w.driver("wait", fit_id=fit, until=FINISHED, timeout=90)["row"]  # no page views: the new worker does it
    assert row["status"] == "succeeded" and row["attempts"] == 2, f"{row}\n{w.log('w5')}"
    assert row["progress"]["lost"].startswith("worker lost: process") and row["error"] == ""
    assert row["worker"]["node"].startswith("w5@") and row["n_agents"] == 4
    assert w.driver("row", fit_id=w.active)["is_active"]


def free_redis_db() -> int:
    import redis

    for db in range(15, 0, -1):
        if redis.Redis(host="127.0.0.1", port=6379, db=db).dbsize() == 0:
            return db
    pytest.skip("no empty Redis database to use")


@pytest.mark.services
@pytest.mark.skipif(not service_up("127.0.0.1", 6379), reason="Redis is not running")
def test_an_idle_worker_reaps_a_frozen_workers_fit_on_redis(tmp_path):
    """On Redis every live worker sends the reaper task on its timer: with no page views at all, an idle
    worker fails the fit of a worker that stopped answering, after the bound."""
    import redis

    db = free_redis_db()
    w = World(tmp_path, REDIS_URL=f"redis://127.0.0.1:6379/{db}", RESEARCH_FIT_REAP_EVERY_SECONDS="1")
    try:
        frozen = w.worker("w6")
        fit = w.driver.start_fit(*SLOW, "--no-activate", "--label", "frozen on redis")
        w.running(fit, "w6")
        w.worker("w7")
        w.wait_log("w7", "w7@")
        w.wait_log("w7", " ready.")
        os.killpg(frozen.pid, signal.SIGSTOP)
        stopped_at = time.time()
        seen = w.driver("wait", fit_id=fit, until=FINISHED, timeout=LOST_AFTER_S + 1 + SLACK_S)  # rows only, no views
        row = seen["row"]
        assert row["status"] == "failed" and re.match(r"worker lost: no heartbeat for \d+ s \(limit 3 s\) from process", row["error"]), row
        assert seen["at"] - stopped_at < LOST_AFTER_S + 1 + SLACK_S
        assert "research.reap_lost_fits" in w.log("w7")
        os.killpg(frozen.pid, signal.SIGCONT)
        w.wait_log("w6", f"fit {fit}: attempt 1 no longer owns the run")
        w.assert_active_untouched(fit)
    finally:
        w.stop_workers()
        w.driver.close()
        redis.Redis(host="127.0.0.1", port=6379, db=db).flushdb()
