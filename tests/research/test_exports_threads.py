"""Where an export's rows are read when it is served over ASGI: on the request's one sync thread (where the
view ran, with its database connection), never on the event loop, and closed there when the client goes
away. Awaited from async tests, so the handler runs as under uvicorn, with a thread of the request's own.

test_exports_asgi.py runs this file again on PostgreSQL, where `.iterator()` reads a server-side cursor:
it must be created, fetched from and closed on that one connection (in autocommit, a WITH HOLD cursor).
"""

from __future__ import annotations

import gc
import threading

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.urls import reverse

from quizsite.core import streaming
from quizsite.items.models import Response
from quizsite.research import exports
from quizsite.research.prepare import DataSpec
from tests.asgi_http import SYNC_ITERATOR_WARNING, asgi_request, session_cookies

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def cookies(staff) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return session_cookies(staff)


@pytest.fixture
def reads(monkeypatch):  # type: ignore[no-untyped-def]
    """Small chunks, one per hop; for every row read: its thread; at the first row, the connection's cursors."""
    monkeypatch.setattr(exports, "CHUNK", 5)
    monkeypatch.setattr(streaming, "BATCH_BYTES", 1)
    seen: dict = {"threads": [], "cursors": None, "closed_on": None}
    original = exports.response_rows

    def recording(qs):  # type: ignore[no-untyped-def]
        try:
            for row in original(qs):
                seen["threads"].append(threading.get_ident())
                if len(seen["threads"]) == 1 and connection.vendor == "postgresql":
                    with connection.cursor() as cursor:  # the same session as the export's own cursor
                        cursor.execute("SELECT name, is_holdable FROM pg_cursors")
                        seen["cursors"] = cursor.fetchall()
                yield row
        finally:
            seen["closed_on"] = threading.get_ident()

    monkeypatch.setattr(exports, "response_rows", recording)
    return seen


async def test_rows_are_read_on_one_sync_thread_and_match(world, cookies, reads):
    loop_thread = threading.get_ident()
    got = await asgi_request(reverse("research:export_responses", args=["csv"]), cookies=cookies)
    assert got.status == 200 and not [w for w in got.warnings if SYNC_ITERATOR_WARNING in w]
    total = await Response.objects.acount()
    assert len(reads["threads"]) == total and len(set(reads["threads"])) == 1
    assert reads["threads"][0] != loop_thread and reads["closed_on"] == reads["threads"][0]
    expected = await sync_to_async(lambda: b"".join(exports.stream_responses("csv", DataSpec())))()
    assert got.body == expected
    if connection.vendor == "postgresql":  # a server-side cursor, kept across the hops (autocommit: WITH HOLD)
        assert [holdable for name, holdable in reads["cursors"] if name.startswith("_django_curs_")] == [True]


async def test_a_client_that_goes_away_stops_the_reading_on_the_same_thread(world, cookies, reads):
    """The close closes the rows, not the garbage collector: with it off, a generator that only reference
    counting would have freed (a frame of the export stays in a cycle) is left open, and its cursor with it."""
    gc.disable()
    try:
        got = await asgi_request(reverse("research:export_responses", args=["jsonl"]), cookies=cookies,
                                 disconnect_after=1)
    finally:
        gc.enable()
    total = await Response.objects.acount()
    assert got.chunks and len(reads["threads"]) < total  # stopped early
    assert len(set(reads["threads"])) == 1 and reads["closed_on"] == reads["threads"][0]  # and closed where it read
