"""Benchmark: streaming exports of the responses table against a naive `list(queryset)` export.

    python benchmarks/export.py                  # 1,000,000 synthetic responses (the documented figure)
    python benchmarks/export.py --rows 100000    # a quicker run

Builds (once, cached at --db) a SQLite database with N synthetic responses (and an override on 1% of
them), then measures four exports, each in its own process so that peak memory is that export's alone:
the project's streaming CSV and Parquet exports (quizsite.research.exports) and the naive way, the whole
queryset as model instances in a list, then written as CSV or Parquet. It prints rows per second and the
peak resident memory above the process's baseline, and the ratios streaming / naive measured in this run.
`--database-url postgresql://...` runs against PostgreSQL instead (the database must exist and be empty
or already hold the benchmark rows).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
METHODS = ["stream-csv", "stream-parquet", "naive-csv", "naive-parquet"]


def django_setup(database_url: str, var_dir: str) -> None:
    os.environ.update(DJANGO_SETTINGS_MODULE="quizsite.settings.local", DATABASE_URL=database_url,
                      THINKALIKE_VAR_DIR=var_dir, DEBUG="0", LOG_LEVEL="WARNING")
    os.environ.pop("REDIS_URL", None)
    sys.path.insert(0, str(REPO))
    import django

    django.setup()


def populate(n_rows: int) -> int:
    """Insert synthetic items, agents and responses with executemany; returns the responses in the table."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, transaction

    from quizsite.agents.models import Agent
    from quizsite.items.models import Item, ItemSet, Response

    call_command("migrate", verbosity=0)
    have = Response.objects.count()
    if have == n_rows:
        return have
    if have:
        raise SystemExit(f"the benchmark database holds {have} responses, not {n_rows}: give another --db")
    n_items, n_agents = 5000, 2000
    with transaction.atomic():
        item_set = ItemSet.objects.create(slug="bench", name="benchmark")
        words = "This is a synthetic clue for the export benchmark".split()
        Item.objects.bulk_create(
            [Item(item_set=item_set, external_id=f"q{i}", kind="tossup", text=" ".join(words) + ".", answer="Answer",
                  data={"words": words, "clue_ends": [len(words)], "power_index": None}) for i in range(n_items)],
            batch_size=1000,
        )
        Agent.objects.bulk_create(
            [Agent(kind="ai" if a % 10 == 0 else "human", name=f"agent {a}") for a in range(n_agents)], batch_size=1000
        )
        user = get_user_model().objects.create_user("bench-researcher", is_staff=True)
    item_ids = list(Item.objects.values_list("id", flat=True))
    agent_ids = list(Agent.objects.values_list("id", flat=True))
    table = Response._meta.db_table
    cols = ["agent_id", "item_id", "created_at", "source", "given", "verdict", "correct", "score", "points",
            "word_index", "clue_index", "n_words", "elapsed_ms", "room", "judge_version", "meta"]
    placeholders = ", ".join(["%s"] * len(cols))
    sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({placeholders})"
    created = "2026-01-01 00:00:00+00:00"
    batch = 20_000
    t0 = time.perf_counter()
    for start in range(0, n_rows, batch):
        rows = []
        for i in range(start, min(start + batch, n_rows)):
            ok = i % 3 != 0
            rows.append((agent_ids[(i * 7919) % n_agents], item_ids[(i * 104729) % n_items], created, "live",
                         f"guess {i % 997}", "accept" if ok else "reject", ok, 0.9 if ok else 0.2, 10 if ok else -5,
                         i % 9 + 1, 0, 9, 1000 + i % 5000, f"room-{i % 50}", "0.1", "{}"))
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.executemany(sql, rows)
        print(f"  inserted {min(start + batch, n_rows):,} responses ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    ids = list(Response.objects.order_by("id").values_list("id", flat=True)[::100])
    from quizsite.items.models import ResponseOverride

    ResponseOverride.objects.bulk_create(
        [ResponseOverride(response_id=r, by=user, verdict="accept", correct=True) for r in ids], batch_size=5000
    )
    return Response.objects.count()


class PeakRSS:
    """Samples this process's resident memory every few milliseconds (native allocations included)."""

    def __init__(self) -> None:
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.peak = self.baseline = self.now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def now(self) -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * self.page

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.now())
            time.sleep(0.005)

    def __enter__(self) -> PeakRSS:
        self.baseline = self.peak = self.now()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.now())


def naive_rows():  # type: ignore[no-untyped-def]
    """The naive export: every response as a model instance in one list, then rows from the instances."""
    from quizsite.items.models import Response
    from quizsite.research.exports import RESPONSE_COLUMNS  # noqa: F401 - same columns as the streaming export
    from quizsite.research.prepare import with_latest_override

    instances = list(with_latest_override(Response.objects.select_related("agent", "item", "item__item_set")).order_by("id"))
    rows = []
    for r in instances:
        agent, item = r.agent, r.item
        rows.append((r.id, r.created_at, agent.public_id, agent.kind, agent.name if agent.kind == "ai" else agent.public_id,
                     item.external_id, item.item_set.slug, item.kind, item.external_id if item.kind == "tossup" else item.data.get("orig_qid"),
                     r.clue_index, r.word_index, r.n_words, r.elapsed_ms, r.duration_ms, r.given, r.choices, r.verdict,
                     r.correct, r.score, r.points, r.room, r.source, r.override_verdict, r.override_correct, r.override_by,
                     r.override_at, (r.meta.get("campaign") or "") if r.source == "annotation" else "",
                     r.meta.get("practice") is True or (r.source == "annotation" and r.meta.get("role") == "training")))
    return rows


def measure(method: str, out: Path) -> dict:
    import pyarrow.parquet  # noqa: F401 - loaded before the baseline: library code is not export memory

    from quizsite.research import exports

    with PeakRSS() as mem:
        t0 = time.perf_counter()
        if method.startswith("stream-"):
            fmt = method.split("-", 1)[1]
            counter = {"n": 0}

            def counted():  # type: ignore[no-untyped-def]
                for row in exports.response_rows(exports.responses_queryset()):
                    counter["n"] += 1
                    yield row

            chunks = exports.stream_csv(counted()) if fmt == "csv" else exports.stream_parquet(counted())
            with open(out, "wb") as fh:
                for chunk in chunks:
                    fh.write(chunk)
            n = counter["n"]
        else:
            rows = naive_rows()
            n = len(rows)
            if method == "naive-csv":
                with open(out, "wb") as fh:
                    for chunk in exports.stream_csv(iter(rows)):
                        fh.write(chunk)
            else:
                import pyarrow as pa
                import pyarrow.parquet as pq

                schema = exports._parquet_schema()
                text = {i for i, f in enumerate(schema) if pa.types.is_string(f.type)}
                columns = [[exports._text(r[i]) if i in text and r[i] is not None else r[i] for r in rows] for i in range(len(schema))]
                pq.write_table(pa.table(columns, schema=schema), out, compression="zstd")
        seconds = time.perf_counter() - t0
    return {"method": method, "rows": n, "seconds": round(seconds, 3), "rows_per_s": round(n / seconds),
            "peak_mb": round((mem.peak - mem.baseline) / 2**20, 1), "bytes": out.stat().st_size}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--db", default=None, help="SQLite file to build or reuse (default: /tmp/thinkalike-export-bench-<rows>.sqlite3)")
    ap.add_argument("--database-url", default=None, help="use this database instead of the SQLite file")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    db = args.db or os.path.join(tempfile.gettempdir(), f"thinkalike-export-bench-{args.rows}.sqlite3")
    url = args.database_url or f"sqlite:///{db}"
    var_dir = os.path.join(tempfile.gettempdir(), "thinkalike-export-bench-var")

    if args.child:
        django_setup(url, var_dir)
        print(json.dumps(measure(args.child, Path(args.out))))
        return

    django_setup(url, var_dir)
    t0 = time.perf_counter()
    n = populate(args.rows)
    print(f"database: {url} with {n:,} responses (ready in {time.perf_counter() - t0:.0f} s)")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for method in args.methods.split(","):
            out = Path(tmp) / f"{method}.out"
            done = subprocess.run([sys.executable, __file__, "--rows", str(args.rows), "--db", db, "--child", method, "--out", str(out),
                                   *(["--database-url", args.database_url] if args.database_url else [])],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                print(f"{method}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
                continue
            results[method] = json.loads(done.stdout.strip().splitlines()[-1])
            r = results[method]
            print(f"  {method:15s} {r['rows']:>10,} rows  {r['seconds']:8.2f} s  {r['rows_per_s']:>9,} rows/s  "
                  f"peak +{r['peak_mb']:8.1f} MB  {r['bytes'] / 2**20:7.1f} MB written")
    print("\nstreaming vs naive list(queryset), same run:")
    for fmt in ("csv", "parquet"):
        s, v = results.get(f"stream-{fmt}"), results.get(f"naive-{fmt}")
        if s and v:
            print(f"  {fmt:8s} throughput x{s['rows_per_s'] / v['rows_per_s']:.2f}  "
                  f"peak memory x{s['peak_mb'] / max(v['peak_mb'], 0.1):.3f} ({s['peak_mb']:.0f} MB vs {v['peak_mb']:.0f} MB)")


if __name__ == "__main__":
    main()
