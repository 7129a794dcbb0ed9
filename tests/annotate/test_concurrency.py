"""Runs race_postgres.py against PostgreSQL in a subprocess (its own settings via DATABASE_URL)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO, service_up

PG_URL = os.environ.get("ANNOTATE_RACE_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/thinkalike_annotate_race")


@pytest.mark.services
@pytest.mark.slow
@pytest.mark.skipif(not service_up("127.0.0.1", 5432), reason="PostgreSQL is not reachable at 127.0.0.1:5432")
def test_assignment_race_on_postgresql():
    env = {**os.environ, "DATABASE_URL": PG_URL}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/annotate/race_postgres.py", "-q", "-n0", "--create-db"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "3 passed" in output, output  # ran for real on PostgreSQL, not skipped
