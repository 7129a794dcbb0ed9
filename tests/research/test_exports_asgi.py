"""Downloads through Django's real ASGI handler (what uvicorn runs): every export built from a synchronous
generator streams there too. Before, Django warned "must consume synchronous iterators" and read the whole
export into a list before the first byte left; now the bytes are the same, no warning, and the first
chunk reaches the client while most rows are still unread (counted, not timed)."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.urls import reverse

from quizsite.accounts import selectors as account_selectors
from quizsite.agents.services import agent_get_or_create_for_user
from quizsite.core import streaming
from quizsite.items.models import Response
from quizsite.research import exports
from quizsite.research.models import FitAgent, FitItem, FitRun
from quizsite.research.prepare import DataSpec
from tests.asgi_http import SYNC_ITERATOR_WARNING, asgi_get, count_rows, session_cookies
from tests.conftest import run_tests_on_postgresql, service_up


def sync_body(response) -> bytes:  # type: ignore[no-untyped-def]
    return b"".join(response.streaming_content)


def no_sync_iterator_warning(warnings: list[str]) -> bool:
    return not [w for w in warnings if SYNC_ITERATOR_WARNING in w]


@pytest.fixture
def cookies(client, staff) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The staff researcher's session, for requests that go through the ASGI handler instead (the test's
    `client` is signed in too, for the WSGI side of the comparisons)."""
    client.force_login(staff)
    return session_cookies(staff)


@pytest.fixture
def counted_rows(monkeypatch):  # type: ignore[no-untyped-def]
    """Small chunks, one chunk per hop to the worker thread, and a count of the rows read so far."""
    monkeypatch.setattr(exports, "CHUNK", 5)
    monkeypatch.setattr(exports, "PARQUET_ROW_GROUP", 5)
    monkeypatch.setattr(streaming, "BATCH_BYTES", 1)
    return count_rows(monkeypatch, exports, "response_rows")


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_responses_export_over_asgi_is_the_same_bytes_without_the_warning(client, cookies, world, fmt):
    url = reverse("research:export_responses", args=[fmt])
    previous = b"".join(exports.stream_responses(fmt, DataSpec()))  # what the export writes on its own
    got = asgi_get(url, cookies=cookies)
    assert got.status == 200 and got.headers["content-disposition"] == f'attachment; filename="responses.{fmt}"'
    assert no_sync_iterator_warning(got.warnings), got.warnings
    assert got.body == previous == sync_body(client.get(url))  # ASGI, the export itself and WSGI agree


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_first_chunk_reaches_the_client_before_the_rows_are_all_read(cookies, world, counted_rows, fmt):
    read_at_each_body: list[int] = []
    got = asgi_get(reverse("research:export_responses", args=[fmt]), cookies=cookies,
                   on_body=lambda _chunk: read_at_each_body.append(counted_rows["read"]))
    total = Response.objects.count()
    assert got.status == 200 and counted_rows["read"] == total > 10
    # The first chunk left after its own 5 rows; before, it left only once all `total` were read.
    assert read_at_each_body[0] == 5
    assert read_at_each_body == sorted(read_at_each_body) and len(read_at_each_body) >= total // 5


def test_account_download_streams_over_asgi(client, staff, cookies, world, monkeypatch):
    agent = agent_get_or_create_for_user(user=staff)
    item = world["items"][0]
    Response.objects.bulk_create([Response(agent=agent, item=item, source="live", given=f"=try {i}", verdict="reject",
                                           correct=False) for i in range(12)])
    for fmt in ("csv", "jsonl"):
        url = f"/accounts/profile/responses.{fmt}"
        got = asgi_get(url, cookies=cookies)
        assert got.status == 200 and no_sync_iterator_warning(got.warnings), got.warnings
        assert got.body == sync_body(client.get(url)) and got.body.count(b"=try") == 12

    monkeypatch.setattr(streaming, "BATCH_BYTES", 1)
    read = count_rows(monkeypatch, account_selectors, "own_responses")
    seen: list[int] = []
    asgi_get("/accounts/profile/responses.csv", cookies=cookies, on_body=lambda _c: seen.append(read["read"]))
    assert seen[0] == 0 and seen[1] == 1 and read["read"] == 12  # the header before any row, then row by row


@pytest.fixture
def fit_run(db):  # type: ignore[no-untyped-def]
    run = FitRun.objects.create(status=FitRun.Status.SUCCEEDED, settings={"dims": 2, "model": "caimira"})
    FitAgent.objects.bulk_create([FitAgent(fit=run, key=f"h-{i}", kind="human", name=f"h-{i}", skill=[0.1 * i, -1.0],
                                           n_responses=3, accuracy=0.5) for i in range(6)])
    FitItem.objects.bulk_create([FitItem(fit=run, key=f"s/t{i}", clue=1, relevance=[0.5, 0.5], difficulty=[1, 2],
                                         effective_difficulty=[0.5, 1.0]) for i in range(4)])
    return run


@pytest.mark.parametrize("what, fmt", [("agents", "csv"), ("agents", "jsonl"), ("items", "csv"), ("items", "jsonl")])
def test_fit_exports_stream_over_asgi(client, cookies, fit_run, what, fmt):
    url = reverse("research:export_fit", args=[fit_run.pk, what, fmt])
    got = asgi_get(url, cookies=cookies)
    assert got.status == 200 and no_sync_iterator_warning(got.warnings), got.warnings
    assert got.body == b"".join(exports.stream_fit(fit_run, what, fmt)) == sync_body(client.get(url))
    assert got.body.count(b"\n") == (6 if what == "agents" else 4) + (fmt == "csv")


def test_romqa_csv_streams_over_asgi(client, cookies, world):
    url = reverse("research:romqa")
    got = asgi_get(url, {"format": "csv"}, cookies=cookies)
    assert got.status == 200 and no_sync_iterator_warning(got.warnings), got.warnings
    assert got.body == sync_body(client.get(url, {"format": "csv"})) and got.body.startswith(b"agent,kind,group,")


def test_caimira_zip_is_read_block_by_block_over_asgi(client, cookies, world):
    url = reverse("research:export_caimira")
    got = asgi_get(url, cookies=cookies)
    assert got.status == 200 and no_sync_iterator_warning(got.warnings), got.warnings

    def files(data: bytes) -> dict[str, bytes]:  # the zip's own timestamps may differ between two builds
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return {name: zf.read(name) for name in zf.namelist()}

    assert files(got.body) == files(sync_body(client.get(url)))
    assert b'"responses"' in files(got.body)["caimira/counts.json"]


@pytest.mark.services
@pytest.mark.slow
@pytest.mark.skipif(not service_up("127.0.0.1", 5432), reason="PostgreSQL is not reachable at 127.0.0.1:5432")
def test_export_threads_and_campaigns_on_postgresql():
    """test_exports_threads.py again on PostgreSQL, where `.iterator()` reads a server-side cursor, and the
    campaign/practice columns and filter (JSON key lookups, which each database spells its own way), in the
    export and in the API's responses."""
    code, out = run_tests_on_postgresql(
        "exports", "tests/research/test_exports_threads.py", "tests/annotate/test_export_campaigns.py",
        "tests/annotate/test_api_campaigns.py",
    )
    assert code == 0 and " passed" in out, out[-4000:]
