"""The play services and consumer suites again, on PostgreSQL (row locks there are real `FOR UPDATE`)."""

import os
import subprocess
import sys

import pytest

from tests.conftest import service_up

from .servers import REPO

pytestmark = [
    pytest.mark.services,
    pytest.mark.slow,
    pytest.mark.skipif(not service_up("127.0.0.1", 5432), reason="PostgreSQL is not running on 127.0.0.1:5432"),
]


def test_play_suites_pass_on_postgresql():
    env = {**os.environ, "DATABASE_URL": f"postgres://root@127.0.0.1:5432/thinkalike_pg_{os.getpid()}"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n0", "--create-db", "-p", "no:randomly",
         "tests/play/test_services.py", "tests/play/test_consumer.py", "tests/play/test_writer.py"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and "skipped" not in result.stdout.splitlines()[-1]
