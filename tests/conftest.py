"""Fixtures shared by the suite: small item sets written here, never copied from ../shared/data."""

from __future__ import annotations

import json
import socket
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
