"""Assignment under a burst of simultaneous requests, on PostgreSQL (run by test_concurrency.py).

Run directly with: DATABASE_URL=postgres://postgres@127.0.0.1:5432/thinkalike_annotate_race \
    python -m pytest tests/annotate/race_postgres.py --create-db

A sleep inside the critical section (after counting who holds what, before leasing) makes every request
overlap every other, so a missing lock would show as over-assignment; the control test shows it does.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest
from django.db import connection, connections
from django.test import Client

from quizsite.annotate import services
from quizsite.annotate.models import Assignment, Participant

pytestmark = [
    pytest.mark.services,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs DATABASE_URL pointing at PostgreSQL"),
]

N_ITEMS, K, N_PEOPLE = 4, 2, 12  # 8 slots, 12 annotators clicking at the same instant


@pytest.fixture
def slow_count(monkeypatch):  # type: ignore[no-untyped-def]
    original = services._taken

    def taken(*args, **kwargs):  # type: ignore[no-untyped-def]
        result = original(*args, **kwargs)
        time.sleep(0.3)  # everyone has counted before anyone leases, unless the lock serialises them
        return result

    monkeypatch.setattr(services, "_taken", taken)


def consenting_clients(n: int) -> list[Client]:
    clients = []
    for i in range(n):
        c = Client()
        c.get(f"/annotate/c/?PROLIFIC_PID=race-{i}")
        assert c.post("/annotate/c/", {"agree": "yes"}).status_code == 302
        clients.append(c)
    return clients


def burst(clients: list[Client], path: str) -> list[int]:
    """GET `path` from every client at once (one thread each); return the status codes."""
    barrier = threading.Barrier(len(clients))
    codes: list[int] = [0] * len(clients)
    errors: list[BaseException] = []

    def run(i: int, c: Client) -> None:
        try:
            barrier.wait()
            codes[i] = c.get(path).status_code
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    return codes


@pytest.mark.django_db(transaction=True)
def test_simultaneous_requests_never_exceed_k(make_campaign, slow_count):
    make_campaign("ghigliottina-choose", "ghig", per_item=K)
    clients = consenting_clients(N_PEOPLE)
    started = time.monotonic()
    codes = burst(clients, "/annotate/c/item/")
    elapsed = time.monotonic() - started
    leased = list(Assignment.objects.values_list("item_id", "participant_id"))
    per_item = Counter(item for item, _ in leased)
    assert len(per_item) == N_ITEMS and set(per_item.values()) == {K}  # every slot filled, none over k
    assert len(leased) == len(set(leased)) == N_ITEMS * K
    # the other four were told they are done (redirect to the end page), not given a fifth lease
    assert sorted(codes) == [200] * (N_ITEMS * K) + [302] * (N_PEOPLE - N_ITEMS * K)
    assert elapsed >= 0.3 * N_PEOPLE * 0.9  # the lock serialised the critical sections
    assert Participant.objects.count() == N_PEOPLE


@pytest.mark.django_db(transaction=True)
def test_simultaneous_submits_each_write_one_response(make_campaign):
    from quizsite.items.models import Response

    make_campaign("ghigliottina-choose", "ghig", per_item=K)
    clients = consenting_clients(N_ITEMS * K)
    posts = []
    for c in clients:
        ctx = c.get("/annotate/c/item/").context
        posts.append((c, ctx["assignment"].pk))
    barrier = threading.Barrier(len(posts) * 2)
    errors: list[BaseException] = []

    def run(c: Client, pk: int) -> None:
        try:
            barrier.wait()
            c.post("/annotate/c/item/", {"assignment": pk, "action": "answer", "choice": 0})
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            connections.close_all()

    # each annotator double-clicks: two identical posts at the same instant
    threads = [threading.Thread(target=run, args=p) for p in posts for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert Response.objects.count() == N_ITEMS * K  # one row per assignment, double clicks refused
    assert Counter(Response.objects.values_list("item_id", flat=True)).most_common(1)[0][1] == K


@pytest.mark.django_db(transaction=True)
def test_control_without_the_lock_the_same_burst_over_assigns(make_campaign, slow_count, monkeypatch):
    """Shows the first test has teeth: remove the campaign lock and the burst breaks the k limit."""
    monkeypatch.setattr(services, "_lock", lambda campaign: campaign)
    make_campaign("ghigliottina-choose", "ghig", per_item=K)
    burst(consenting_clients(N_PEOPLE), "/annotate/c/item/")
    assert Assignment.objects.count() > N_ITEMS * K
