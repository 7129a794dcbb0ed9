"""Live play under load, small enough for CI: nothing lost, nothing duplicated, and word lateness within a
bound of the minimal `websockets` server measured by the same clients in the same run
(benchmarks/wsbench.py; `python benchmarks/ws_load.py` is the full benchmark)."""

import asyncio

import pytest

from benchmarks.wsbench import MinimalServer, ProjectServer, run_case
from tests.conftest import service_up

pytestmark = [pytest.mark.slow, pytest.mark.serial]
SERVICES = pytest.mark.skipif(
    not (service_up("127.0.0.1", 5432) and service_up("127.0.0.1", 6379)),
    reason="PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379) must both be running",
)
CASES = [(1, 100), (10, 10)]


@pytest.fixture(scope="module")
def minimal():
    server = MinimalServer()
    yield server
    server.close()


def within_bounds(project, baseline) -> tuple[bool, dict]:
    got, base = project.row(), baseline.row()
    summary = {k: round(v, 1) for k, v in got.items()} | {f"minimal_{k}": round(v, 1) for k, v in base.items()}
    summary["latest_words"] = {i: round(v) for i, v in sorted(project.worst_late_by_word.items(), key=lambda kv: -kv[1])[:6]}
    assert project.deliveries == baseline.deliveries > 0, summary
    assert got["lost"] == got["duplicated"] == got["missing_end"] == got["refused"] == 0, summary
    # Generous, because the machine is shared: the old design missed this by 10-100x.
    ok = (got["late_p99"] <= 4 * base["late_p99"] + 100 and got["spread_p99"] <= 4 * base["spread_p99"] + 100
          and got["ruling_p99"] <= 500)
    return ok, summary


def check(server, minimal, rooms, per_room) -> None:
    """Nothing lost in any run; the timing bound in one of two (a shared machine can stall one run)."""
    summaries = []
    for _ in range(2):
        baseline = asyncio.run(run_case(minimal.ports, rooms, per_room))
        project = asyncio.run(run_case(server.ports, rooms, per_room))
        ok, summary = within_bounds(project, baseline)
        if ok:
            return
        summaries.append(summary)
    raise AssertionError(f"over the bound twice: {summaries}")


@pytest.mark.parametrize(("rooms", "per_room"), CASES)
def test_embedded_default_under_load(minimal, embedded_server, rooms, per_room):
    check(embedded_server, minimal, rooms, per_room)


@SERVICES
@pytest.mark.services
@pytest.mark.parametrize(("rooms", "per_room"), CASES)
def test_two_processes_on_postgres_and_redis_under_load(minimal, services_server, rooms, per_room):
    check(services_server, minimal, rooms, per_room)


@pytest.fixture(scope="module")
def embedded_server():
    server = ProjectServer("embedded")
    yield server
    server.close()


@pytest.fixture(scope="module")
def services_server():
    server = ProjectServer("services", procs=2)
    yield server
    server.close()
