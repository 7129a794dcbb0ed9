"""Fits whose worker is lost, in one process: the reaper, the claim of a redelivered task, cancel, the heartbeat.

The real thing (a Celery worker killed mid-fit) is in test_worker_loss.py; these pin each rule fast.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse
from django.utils import timezone

from quizsite.core import liveness
from quizsite.research import fits, services
from quizsite.research.fits import FitSpec
from quizsite.research.models import FitAgent, FitRun

FAST = {"embedder": "hashing-32", "max_epochs": 30, "dims": 2}
ELSEWHERE = {"host": "elsewhere", "pid": 4242, "node": "celery@elsewhere", "space": "another-machine", "start": 1}


@pytest.fixture
def active(world, research_cache):
    run = fits.fit_run_execute(fit_id=services.fitrun_create(spec=FitSpec(**FAST)).pk)
    assert run.status == "succeeded" and run.is_active
    return run


def running(*, beat_age: float, worker: dict | None = None, attempts: int = 1, **extra) -> FitRun:
    now = timezone.now()
    return FitRun.objects.create(
        settings=FitSpec(**FAST).as_dict(), status="running", attempts=attempts, worker=worker or ELSEWHERE,
        started_at=now - timedelta(seconds=beat_age + 5), heartbeat_at=now - timedelta(seconds=beat_age),
        progress={"phase": "fitting", "epoch": 3}, **extra,
    )


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_reaper_fails_a_silent_run_and_touches_nothing_else(active, settings):
    settings.RESEARCH_FIT_LOST_AFTER_SECONDS = 30
    lost = running(beat_age=100)
    alive = running(beat_age=2)
    committed = FitRun.objects.create(settings=lost.settings, status="succeeded", attempts=1, worker=ELSEWHERE,
                                      heartbeat_at=timezone.now() - timedelta(hours=1))
    changed = services.fitrun_reap_lost()
    assert [r.pk for r in changed] == [lost.pk]
    lost.refresh_from_db()
    assert lost.status == "failed" and lost.finished_at is not None and not lost.is_active
    assert re.match(r"worker lost: no heartbeat for 10\d s \(limit 30 s\) from process 4242 on elsewhere", lost.error)
    assert FitRun.objects.get(pk=alive.pk).status == "running"
    assert FitRun.objects.get(pk=committed.pk).status == "succeeded"  # results committed: never marked failed
    assert FitRun.objects.get(is_active=True).pk == active.pk
    assert services.fitrun_reap_lost() == []  # idempotent


def test_a_process_seen_gone_on_this_machine_is_lost_at_once(db):
    me = liveness.identity("celery@here")
    gone = running(beat_age=1, worker={**me, "pid": dead_pid()})
    zombie_proc = subprocess.Popen([sys.executable, "-c", "pass"])  # exits, and stays a zombie until waited for
    deadline = time.monotonic() + 10
    while liveness._proc_stat(zombie_proc.pid) and liveness._proc_stat(zombie_proc.pid)[0] != "Z" and time.monotonic() < deadline:
        time.sleep(0.05)
    zombie = running(beat_age=1, worker={**me, "pid": zombie_proc.pid, "start": liveness._proc_stat(zombie_proc.pid)[1]})
    reused = running(beat_age=1, worker={**me, "start": me["start"] - 1})  # our PID, but another process's start time
    alive = running(beat_age=1, worker=me)
    foreign = running(beat_age=1, worker={**ELSEWHERE, "pid": dead_pid()})  # another PID namespace: cannot tell
    try:
        reaped = {r.pk for r in services.fitrun_reap_lost()}
    finally:
        zombie_proc.wait()
    assert reaped == {gone.pk, zombie.pk, reused.pk}
    gone.refresh_from_db()
    assert gone.status == "failed" and "is gone (last heartbeat 1 s before)" in gone.error
    assert FitRun.objects.get(pk=alive.pk).status == "running" and FitRun.objects.get(pk=foreign.pk).status == "running"


def test_retry_on_worker_loss_requeues_at_most_max_retries(db, settings, django_capture_on_commit_callbacks):
    settings.RESEARCH_FIT_RETRY_ON_WORKER_LOSS = True
    settings.RESEARCH_FIT_MAX_RETRIES = 1
    run = running(beat_age=100)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.fitrun_reap_lost()
    run.refresh_from_db()
    assert run.status == "queued" and run.attempts == 1 and len(callbacks) == 1  # the task is sent again
    assert run.progress["lost"].startswith("worker lost: no heartbeat") and run.finished_at is None
    claimed = services.fitrun_claim(fit_id=run.pk, worker=ELSEWHERE)
    assert claimed is not None and claimed.status == "running" and claimed.attempts == 2
    FitRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=100))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.fitrun_reap_lost()
    run.refresh_from_db()
    assert run.status == "failed" and run.error.endswith("(attempt 2 of 2)") and callbacks == []


def test_a_running_row_from_before_heartbeats_is_reaped_and_not_retried_unless_allowed(db, settings):
    """Rows a worker on older code left running: no heartbeat, no worker, attempts 0."""
    legacy = FitRun.objects.create(settings=FitSpec(**FAST).as_dict(), status="running", started_at=timezone.now())
    services.fitrun_reap_lost()
    legacy.refresh_from_db()
    assert legacy.status == "running"  # started 0 s ago: it gets the bound from its start
    FitRun.objects.filter(pk=legacy.pk).update(started_at=timezone.now() - timedelta(minutes=5))
    services.fitrun_reap_lost()
    legacy.refresh_from_db()
    assert legacy.status == "failed" and re.match(r"worker lost: no heartbeat for 30\d s .* from an unknown process$", legacy.error)


@pytest.mark.parametrize("status", ["succeeded", "failed", "cancelled"])
def test_a_redelivered_task_of_a_finished_run_does_nothing(world, research_cache, status):
    done = timezone.now() - timedelta(minutes=5)
    run = FitRun.objects.create(settings=FitSpec(**FAST).as_dict(), status=status, error="why", attempts=1, finished_at=done)
    again = fits.fit_run_execute(fit_id=run.pk)
    assert (again.status, again.error, again.finished_at, again.attempts) == (status, "why", done, 1)
    assert not FitAgent.objects.filter(fit=run).exists()


def test_a_redelivered_task_of_a_live_run_does_nothing(world, research_cache):
    run = running(beat_age=1)
    again = fits.fit_run_execute(fit_id=run.pk)
    assert again.status == "running" and again.attempts == 1 and again.worker == ELSEWHERE


def test_a_redelivered_task_of_a_lost_run_fails_it_or_retries_it(world, research_cache, settings):
    lost = running(beat_age=100)
    assert fits.fit_run_execute(fit_id=lost.pk).status == "failed"
    settings.RESEARCH_FIT_RETRY_ON_WORKER_LOSS = True
    retried = fits.fit_run_execute(fit_id=running(beat_age=100).pk)
    assert retried.status == "succeeded" and retried.attempts == 2, retried.error
    assert retried.progress["lost"].startswith("worker lost: no heartbeat for 10")


def test_cancel_is_at_once_unless_the_worker_lives(db, settings):
    queued = services.fitrun_create(spec=FitSpec(**FAST))
    assert services.fitrun_cancel(run=queued).status == "cancelled"
    live = services.fitrun_cancel(run=running(beat_age=1))
    assert live.status == "running" and live.cancel_requested  # its worker stops it at the next progress step
    dead = services.fitrun_cancel(run=running(beat_age=100))
    assert dead.status == "cancelled" and dead.error.startswith("cancelled (worker lost: no heartbeat for 10")
    dead_pid_run = services.fitrun_cancel(run=running(beat_age=1, worker={**liveness.identity(), "pid": dead_pid()}))
    assert dead_pid_run.status == "cancelled" and "is gone" in dead_pid_run.error
    FitRun.objects.filter(pk=live.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=100))
    services.fitrun_reap_lost()  # asked to stop, then its worker died: cancelled, not failed
    live.refresh_from_db()
    assert live.status == "cancelled" and "worker lost" in live.error


@pytest.mark.parametrize("taken_by", ["reaper", "cancel"])
def test_an_attempt_that_lost_the_run_writes_nothing(active, monkeypatch, taken_by):
    run = services.fitrun_create(spec=FitSpec(**{**FAST, "max_epochs": 500}))
    real_fit = fits.irt.fit

    def fit_and_lose(data, config, on_epoch=None):
        def hook(st):
            if st.epoch == 3:  # this process froze long enough for the reaper, or a cancel, to take the run
                if taken_by == "reaper":
                    FitRun.objects.filter(pk=run.pk).update(status="failed", error="worker lost: test")
                else:
                    FitRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=100))
                    services.fitrun_cancel(run=run)
            on_epoch(st)

        return real_fit(data, config, on_epoch=hook)

    monkeypatch.setattr(fits, "PROGRESS_EVERY_S", 0)
    monkeypatch.setattr(fits.irt, "fit", fit_and_lose)
    after = fits.fit_run_execute(fit_id=run.pk)
    expected = ("failed", "worker lost: test") if taken_by == "reaper" else ("cancelled", None)
    assert after.status == expected[0] and (expected[1] is None or after.error == expected[1])
    assert not FitAgent.objects.filter(fit=run).exists() and after.artifact is None
    assert FitRun.objects.get(is_active=True).pk == active.pk


def test_store_refuses_when_the_run_was_taken_meanwhile(active, monkeypatch):
    run = services.fitrun_create(spec=FitSpec(**FAST))
    real_succeed = services.fitrun_succeed

    def reaped_just_before(**kwargs):
        FitRun.objects.filter(pk=run.pk).update(status="failed", error="worker lost: test")
        return real_succeed(**kwargs)

    monkeypatch.setattr(services, "fitrun_succeed", reaped_just_before)
    after = fits.fit_run_execute(fit_id=run.pk)
    assert after.status == "failed" and not FitAgent.objects.filter(fit=run).exists()


def test_heartbeat_thread_beats_during_a_silent_phase_and_stops(transactional_db, world, research_cache, settings, monkeypatch):
    settings.RESEARCH_FIT_HEARTBEAT_SECONDS = 0.2
    settings.RESEARCH_FIT_LOST_AFTER_SECONDS = 1
    run = services.fitrun_create(spec=FitSpec(**FAST))
    real_fit = fits.irt.fit
    seen = {}

    def silent_then_fit(data, config, on_epoch=None):
        before = FitRun.objects.get(pk=run.pk).heartbeat_at
        time.sleep(1.0)  # a long step without progress callbacks (think: a slow embedding)
        seen["beats"] = FitRun.objects.get(pk=run.pk).heartbeat_at - before
        seen["reaped"] = [r.pk for r in services.fitrun_reap_lost()]
        return real_fit(data, config, on_epoch=on_epoch)

    monkeypatch.setattr(fits.irt, "fit", silent_then_fit)
    after = fits.fit_run_execute(fit_id=run.pk)
    assert after.status == "succeeded", after.error
    assert seen["beats"] >= timedelta(seconds=0.5) and seen["reaped"] == []
    assert not [t for t in threading.enumerate() if t.name == f"fit-{run.pk}-heartbeat"]


def test_the_bound_must_exceed_two_heartbeats(settings):
    settings.RESEARCH_FIT_HEARTBEAT_SECONDS = 5
    settings.RESEARCH_FIT_LOST_AFTER_SECONDS = 10
    with pytest.raises(ImproperlyConfigured):
        liveness.lost_after_s()


def test_pages_and_api_reap_and_show_why(active, staff, client, research_cache):
    lost = running(beat_age=100)
    client.force_login(staff)
    progress = client.get(reverse("research:fit_progress", args=[lost.pk])).json()
    assert progress["status"] == "failed" and progress["error"].startswith("worker lost: no heartbeat for 10")
    detail = client.get(reverse("research:fit_detail", args=[lost.pk])).content.decode()
    assert "Failed" in detail and "worker lost: no heartbeat for 10" in detail and ">Cancel<" not in detail
    listing = client.get(reverse("research:fit_list")).content.decode()
    assert "worker lost: no heartbeat" in listing
    other = running(beat_age=100)
    api = client.get(f"/api/fits/{other.pk}/").json()
    assert api["status"] == "failed" and api["error"].startswith("worker lost") and api["attempts"] == 1
    assert FitRun.objects.get(is_active=True).pk == active.pk


def test_tasks_are_imported_by_nothing_in_the_app():
    """fits.py and services.py used to import tasks.py, which imports them: services now enqueue by task name."""
    app = Path(fits.__file__).parent
    for path in app.rglob("*.py"):
        if path.name in ("tasks.py", "apps.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
                assert not any(n == "tasks" or n.endswith(".tasks") for n in names), f"{path} imports tasks"


def test_a_page_view_survives_a_reaper_that_cannot_write(active, staff, client, monkeypatch):
    from django.db import OperationalError

    def locked(fit_id):
        raise OperationalError("database is locked")

    lost = running(beat_age=100)
    monkeypatch.setattr(services, "_reap", locked)
    client.force_login(staff)
    assert client.get(reverse("research:fit_detail", args=[lost.pk])).status_code == 200
    assert FitRun.objects.get(pk=lost.pk).status == "running"  # the next read tries again


def test_every_worker_schedules_the_reaper_task_on_its_timer(settings):
    from quizsite.research.worker import AGENT_REAP_TASK, REAP_TASK, FitReaperStep

    class Timer:
        def __init__(self):
            self.calls = []

        def call_repeatedly(self, secs, fun, args=()):
            self.calls.append((secs, fun, args))
            return self

        def cancel(self):
            self.calls.clear()

    class App:
        class conf:
            broker_url = "redis://127.0.0.1:6379/0"

        sent: list = []

        def send_task(self, name, **options):
            self.sent.append((name, options))

    class Worker:
        timer, app = Timer(), App()

    settings.RESEARCH_FIT_REAP_EVERY_SECONDS = 7
    step = FitReaperStep(Worker())
    step.start(Worker)
    ((secs, fun, args),) = Worker.timer.calls
    fun(*args)
    assert secs == 7 and Worker.app.sent == [(REAP_TASK, {"expires": 7}), (AGENT_REAP_TASK, {"expires": 7})]
    step.stop(Worker)
    assert Worker.timer.calls == []
    settings.RESEARCH_FIT_REAP_EVERY_SECONDS = 0
    FitReaperStep(Worker()).start(Worker)
    assert Worker.timer.calls == []
