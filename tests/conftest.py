"""Fixtures shared by the suite: small item sets written here, never copied from ../shared/data."""

from __future__ import annotations

import json
import socket
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def service_up(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def run_tests_on_postgresql(tag: str, *args: str) -> tuple[int, str]:
    """Run pytest with `args` in a subprocess on a PostgreSQL database of its own, dropped afterwards,
    for tests whose SQL each database plans its own way; returns the exit code and the output to show.
    The caller skips when PostgreSQL is not running."""
    import os
    import subprocess
    import sys

    import psycopg

    name = f"thinkalike_{tag}_{os.getpid()}"
    env = {**os.environ, "DATABASE_URL": f"postgres://root@127.0.0.1:5432/{name}"}
    try:
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-n0", "--create-db", "-p", "no:randomly", *args],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
        )
    finally:  # pytest-django keeps the test database (--reuse-db); this one is never reused
        with psycopg.connect("postgresql://root@127.0.0.1:5432/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "test_{name}"')
    out = result.stdout + result.stderr[-2000:]
    assert "skipped" not in result.stdout.splitlines()[-1], out[-4000:]  # a skip there would pass unseen
    return result.returncode, out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Every word is unique ("W07") so a test can tell exactly which words a frame carries.
MARKED_WORDS = [f"W{i:02d}" for i in range(24)]
MARKED_TEXT = (
    " ".join(MARKED_WORDS[:7]) + ". " + " ".join(MARKED_WORDS[7:13]) + ". " + " ".join(MARKED_WORDS[13:16])
    + " (*) " + " ".join(MARKED_WORDS[16:20]) + ". For ten points, " + " ".join(MARKED_WORDS[20:]) + "."
)
TOSSUPS = [
    {
        "id": "marked",
        "question": MARKED_TEXT,
        "answer": "<b><u>Zanzibar</u></b> [prompt on Zanzi]",
        "category": "Geography",
    },
]


@pytest.fixture
def tossup_file(tmp_path: Path) -> Path:
    path = tmp_path / "tossups.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in TOSSUPS) + "\n")
    return path


@pytest.fixture
def tossup_set(db, tossup_file):  # type: ignore[no-untyped-def]
    from quizsite.items.importers import items_import

    items_import(fmt="quizbowl", path=tossup_file, set_slug="t")
    from quizsite.items.models import Item

    return Item.objects.get(external_id="marked")


@pytest.fixture(autouse=True)
def _fresh_room_clocks():
    """Room clock bookkeeping is per process; each test starts with none."""
    from quizsite.play import hub

    hub.reset()
    yield
    hub.reset()


# Debian's chromium, driven by Playwright from PyPI; a test tool's own browser download fails here.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]
needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (apt-get install chromium)"
)


def launch_chromium(playwright):  # type: ignore[no-untyped-def]
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


PHONE = {"width": 390, "height": 844}


@contextmanager
def browser_page(live_server, *, client=None, viewport=None):  # type: ignore[no-untyped-def]
    """A chromium page on the live server, signed in as the Django test client's user when one is given."""
    from django.conf import settings
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            context = browser.new_context(viewport=viewport) if viewport else browser.new_context()
            if client is not None:
                session = client.cookies[settings.SESSION_COOKIE_NAME].value
                context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}])
            page = context.new_page()
            page.set_default_timeout(30000)
            yield page
        finally:
            browser.close()


def page_overflow(page) -> int:  # type: ignore[no-untyped-def]
    """How far the page is wider than the window (px): what makes a phone scroll sideways."""
    return page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")


# --- Running the suite on two processes (pytest-xdist; `-n 2` in pyproject.toml) ---------------------
#
# Most of the suite's wall time is spent waiting on child processes (the ASGI server, Celery workers, chromium),
# so two pytest workers finish it in much less time even on two cores. Three rules keep that honest:
#
# * A test marked `serial` (it bounds a latency or a deadline: tests/load, the fault tests) never runs
#   beside another test: it holds a suite-wide exclusive lock, every other test a shared one (see
#   SuiteLock). All serial tests are one xdist group, so they run back to back on one worker, first.
# * Work is handed out a file at a time (FileScheduling), so a module-scoped fixture (a server, a
#   worker, a fitted model) starts once, not once per worker.
# * Files with slow or browser tests are handed out first, so the last file to finish is a short one.
# A run with `-n0` (or `-p no:xdist` with addopts overridden) is the plain serial run it always was.


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group the serial tests for xdist, and (on xdist workers only) put slow files first."""
    for item in items:
        if item.get_closest_marker("serial"):
            item.add_marker(pytest.mark.xdist_group("serial"))
    if not hasattr(config, "workerinput"):
        return  # a plain run keeps the collection order

    def file_of(item: pytest.Item) -> str:
        return item.nodeid.split("::", 1)[0]

    rank: dict[str, int] = {}
    for item in items:
        slow = item.get_closest_marker("slow") or item.get_closest_marker("browser")
        here = 0 if item.get_closest_marker("serial") else 1 if slow else 2
        rank[file_of(item)] = min(rank.get(file_of(item), 2), here)
    items.sort(key=lambda item: rank[file_of(item)])  # stable: each file keeps its own order


class SuiteLock:
    """A readers-writer lock over the xdist workers of one run (flock on two files in the temp dir).

    Ordinary tests share it; a serial test takes it alone. A writer first holds the turnstile, so the
    other worker cannot keep re-taking the shared lock between its tests and starve it.
    """

    def __init__(self, run_id: str) -> None:
        import tempfile

        base = Path(tempfile.gettempdir()) / f"thinkalike-pytest-{run_id}"
        self.turnstile = (base.with_suffix(".turnstile")).open("a+")
        self.main = (base.with_suffix(".lock")).open("a+")
        self.held: str | None = None

    def acquire(self, exclusive: bool) -> None:
        import fcntl

        want = "exclusive" if exclusive else "shared"
        if self.held == want:
            return
        self.release()
        fcntl.flock(self.turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(self.main, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        finally:
            fcntl.flock(self.turnstile, fcntl.LOCK_UN)
        self.held = want

    def release(self) -> None:
        import fcntl

        if self.held is not None:
            fcntl.flock(self.main, fcntl.LOCK_UN)
            self.held = None


_suite_lock: SuiteLock | None = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    """Setup, call and teardown of each test under the suite lock (xdist workers only)."""
    global _suite_lock
    workerinput = getattr(item.config, "workerinput", None)
    if workerinput is None:
        return (yield)
    if _suite_lock is None:
        _suite_lock = SuiteLock(workerinput["testrunuid"])
    serial = item.get_closest_marker("serial") is not None
    _suite_lock.acquire(exclusive=serial)
    try:
        return (yield)
    finally:
        # Serial tests back to back keep the lock: the other worker waits until the last one is done.
        if not (serial and nextitem is not None and nextitem.get_closest_marker("serial")):
            _suite_lock.release()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # type: ignore[no-untyped-def]
    """Hand out work a file at a time (or an xdist group at a time), in collection order."""
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.rfind("@") > nodeid.rfind("]"):
                return nodeid.split("@")[-1]
            return nodeid.split("::", 1)[0]

    return FileScheduling(config, log)
