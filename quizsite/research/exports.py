"""Exports (DATA.md): the responses table as CSV, JSON lines or Parquet, the `caimira` folder, and a fit's
parameters. Response exports stream: rows come from a database cursor in chunks and leave as encoded
chunks, so memory stays flat however many rows there are. Human agents appear only as pseudonymous
public ids (names and emails never leave the admin).

CSV cells that a spreadsheet would run as a formula (text starting with `=`, `+`, `-`, `@`, tab or carriage
return) get a leading single quote (`quizsite.core.csvsafe`); JSON lines and Parquet keep the exact text.

The responses export keeps DATA.md's columns in order and appends the latest researcher override
(`override_verdict`, `override_correct`, `override_by`, `override_at`; the original ruling is untouched),
then `campaign` (the annotation campaign's slug, empty for every other row) and `practice` (true for an
annotation practice answer, which only `include_practice` keeps). All of it comes from one query.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db.models import QuerySet

from quizsite.agents.models import Agent
from quizsite.core.csvsafe import csv_cell
from quizsite.core.streaming import closing_iter

from .models import FitAgent, FitItem, FitRun
from .prepare import DataSpec, prepare, responses_selected, with_campaign_and_practice, with_latest_override

RESPONSE_COLUMNS = [
    "response_id", "created_at", "agent_id", "agent_kind", "agent_name", "item_id", "item_set", "item_kind",
    "tossup_id", "clue_index", "word_index", "n_words", "elapsed_ms", "duration_ms", "given", "choices", "verdict",
    "correct", "score", "points", "room", "source",
    "override_verdict", "override_correct", "override_by", "override_at",
    "campaign", "practice",
]
FORMATS = {"csv": ("text/csv; charset=utf-8", "csv"), "jsonl": ("application/x-ndjson", "jsonl"),
           "parquet": ("application/vnd.apache.parquet", "parquet")}
_FIELDS = [
    "id", "created_at", "agent__public_id", "agent__kind", "agent__name", "item__external_id", "item__item_set__slug",
    "item__kind", "item__data__orig_qid", "clue_index", "word_index", "n_words", "elapsed_ms", "duration_ms", "given",
    "choices", "verdict", "correct", "score", "points", "room", "source",
    "override_verdict", "override_correct", "override_by", "override_at",
    "campaign", "practice",
]
CHUNK = 2000
PARQUET_ROW_GROUP = 10_000  # rows per Parquet row group: each group's bytes leave before the next is read


def responses_queryset(spec: DataSpec | None = None) -> QuerySet:
    """The rows of the responses export, in id order, as tuples in `_FIELDS` order.

    Campaign and practice come from `prepare.with_campaign_and_practice`, in the same query (the API's
    responses read the same definition).
    """
    qs = with_campaign_and_practice(with_latest_override(responses_selected(spec or DataSpec())))
    return qs.order_by("id").values_list(*_FIELDS)


def response_rows(qs: QuerySet) -> Iterator[tuple]:
    """Export rows in RESPONSE_COLUMNS order: pseudonymous humans, tossup id for tossups and clue prefixes."""
    with closing_iter(qs.iterator(chunk_size=CHUNK)) as rows:  # closed early: the cursor closes here and now
        for row in rows:
            (rid, created, public_id, kind, name, ext_id, slug, item_kind, orig_qid, *rest) = row
            agent_name = name if kind == Agent.Kind.AI else public_id
            tossup_id = ext_id if item_kind == "tossup" else (orig_qid if orig_qid is not None else None)
            yield (rid, created, public_id, kind, agent_name, ext_id, slug, item_kind, tossup_id, *rest)


def _text(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    return value


def stream_csv(rows: Iterable[tuple], columns: list[str] = RESPONSE_COLUMNS) -> Iterator[bytes]:
    """The one CSV writer of the exports; every text cell goes through `csv_cell` (no live formulas)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    n = 0
    with closing_iter(rows) as source:
        for row in source:
            writer.writerow(["" if v is None else csv_cell(_text(v)) for v in row])
            n += 1
            if n % CHUNK == 0:
                yield buffer.getvalue().encode()
                buffer.seek(0)
                buffer.truncate()
    yield buffer.getvalue().encode()


def stream_jsonl(rows: Iterable[tuple], columns: list[str] = RESPONSE_COLUMNS) -> Iterator[bytes]:
    parts: list[str] = []
    with closing_iter(rows) as source:
        for row in source:
            record = {c: (v.isoformat() if isinstance(v, datetime) else v) for c, v in zip(columns, row, strict=True)}
            parts.append(json.dumps(record, ensure_ascii=False))
            if len(parts) == CHUNK:
                yield ("\n".join(parts) + "\n").encode()
                parts = []
    if parts:
        yield ("\n".join(parts) + "\n").encode()


class _Sink(io.RawIOBase):
    """A write-only file that hands its bytes out between row groups (pyarrow writes into it)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.position = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        b = bytes(data)
        self.chunks.append(b)
        self.position += len(b)
        return len(b)

    def tell(self) -> int:
        return self.position

    def take(self) -> bytes:
        out, self.chunks = b"".join(self.chunks), []
        return out


def _parquet_schema():
    import pyarrow as pa

    types = {
        "response_id": pa.int64(), "created_at": pa.timestamp("us", tz="UTC"), "clue_index": pa.int32(),
        "word_index": pa.int32(), "n_words": pa.int32(), "elapsed_ms": pa.int64(), "duration_ms": pa.int64(),
        "correct": pa.bool_(), "score": pa.float64(), "points": pa.int32(), "override_correct": pa.bool_(),
        "override_at": pa.timestamp("us", tz="UTC"), "practice": pa.bool_(),
    }
    return pa.schema([(c, types.get(c, pa.string())) for c in RESPONSE_COLUMNS])


def stream_parquet(rows: Iterable[tuple], row_group: int | None = None) -> Iterator[bytes]:
    """Parquet written one row group at a time; each group's bytes leave before the next is read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    row_group = row_group or PARQUET_ROW_GROUP
    schema = _parquet_schema()
    text_columns = {i for i, f in enumerate(schema) if pa.types.is_string(f.type)}
    sink = _Sink()
    writer = pq.ParquetWriter(pa.PythonFile(sink, mode="w"), schema, compression="zstd")
    columns: list[list[Any]] = [[] for _ in RESPONSE_COLUMNS]

    def flush() -> bytes:
        batch = pa.record_batch([pa.array(col, type=f.type) for col, f in zip(columns, schema, strict=True)], schema=schema)
        writer.write_batch(batch)
        for col in columns:
            col.clear()
        return sink.take()

    n = 0
    with closing_iter(rows) as source:
        for row in source:
            for i, value in enumerate(row):
                columns[i].append(_text(value) if i in text_columns and value is not None else value)
            n += 1
            if n % row_group == 0:
                yield flush()
    if n % row_group or n == 0:
        yield flush()
    writer.close()
    yield sink.take()


def stream_responses(fmt: str, spec: DataSpec | None = None) -> Iterator[bytes]:
    rows = response_rows(responses_queryset(spec))
    if fmt == "csv":
        return stream_csv(rows)
    if fmt == "jsonl":
        return stream_jsonl(rows)
    if fmt == "parquet":
        return stream_parquet(rows)
    raise ValueError(f"format must be one of {', '.join(FORMATS)}")


# --- the caimira folder --------------------------------------------------------------------------------

_PRIVATE = ("item_pk", "agent_pk")


def caimira_export(*, spec: DataSpec, directory: Path) -> dict[str, Any]:
    """Write queries.jsonl, agents.jsonl and responses.jsonl that `python -m irt fit` reads as is.

    The same preparation as a fit (clue items, backfill, overrides, grouping); returns the counts.
    """
    prepared = prepare(spec)
    directory.mkdir(parents=True, exist_ok=True)
    for name, records in (("queries", prepared.queries), ("agents", prepared.agents), ("responses", prepared.responses)):
        with open(directory / f"{name}.jsonl", "w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps({k: v for k, v in r.items() if k not in _PRIVATE}, ensure_ascii=False) + "\n")
    (directory / "counts.json").write_text(json.dumps(prepared.counts, indent=2))
    return prepared.counts


# --- fitted parameters ---------------------------------------------------------------------------------


def fit_agent_records(run: FitRun) -> Iterator[dict[str, Any]]:
    with closing_iter(FitAgent.objects.filter(fit=run).order_by("key").iterator(chunk_size=CHUNK)) as agents:
        for a in agents:
            yield {
                "id": a.key, "kind": a.kind, "name": a.name, "n_responses": a.n_responses, "accuracy": a.accuracy,
                "members": a.members, "skill": a.skill,
            }


def fit_item_records(run: FitRun) -> Iterator[dict[str, Any]]:
    qs = FitItem.objects.filter(fit=run).select_related("item", "item__item_set").order_by("key")
    with closing_iter(qs.iterator(chunk_size=CHUNK)) as fit_items:
        for fi in fit_items:
            item = fi.item
            yield {"id": fi.key, "item_set": item.item_set.slug if item else None,
                   "item_id": item.external_id if item else None, "clue": fi.clue, "n_responses": fi.n_responses,
                   "accuracy": fi.accuracy, "cluster": fi.cluster, "relevance": fi.relevance, "difficulty": fi.difficulty,
                   "effective_difficulty": fi.effective_difficulty}


_VECTORS = {"agents": ("skill",), "items": ("relevance", "difficulty", "effective_difficulty")}


def stream_fit(run: FitRun, what: str, fmt: str) -> Iterator[bytes]:
    """A fit's agents or items: JSON lines with vectors as lists, or CSV with one column per dimension."""
    if what not in _VECTORS:
        raise ValueError("what must be agents or items")
    if fmt not in ("csv", "jsonl"):
        raise ValueError("fit parameters export as csv or jsonl")
    records = fit_agent_records(run) if what == "agents" else fit_item_records(run)
    if fmt == "jsonl":
        return _jsonl_records(records)
    m, vectors = run.dims, _VECTORS[what]
    first = ["id", "kind", "name", "n_responses", "accuracy", "members"] if what == "agents" else \
        ["id", "item_set", "item_id", "clue", "n_responses", "accuracy", "cluster"]
    columns = first + [f"{v}_{k + 1}" for v in vectors for k in range(m)]

    def flat(r: dict[str, Any]) -> tuple:
        scalars = [" ".join(r[c]) if c == "members" else r[c] for c in first]
        return (*scalars, *(x for v in vectors for x in (list(r[v]) + [None] * (m - len(r[v])))))

    return stream_csv(_each(flat, records), columns)


def _each(fn: Callable[[dict[str, Any]], Any], records: Iterator[dict[str, Any]]) -> Iterator[Any]:
    """`map`, but closing it closes `records` (and their cursor) at once: see `closing_iter`."""
    with closing_iter(records) as source:
        for r in source:
            yield fn(r)


def _jsonl_records(records: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    return _each(lambda r: json.dumps(r, ensure_ascii=False).encode() + b"\n", records)


# --- analysis figures (analyses.py) ----------------------------------------------------------------------

FIGURES = ("figures", "cluster_difficulty", "regressions", "group_accuracy", "romqa")


def _figure_rows(run: FitRun, what: str) -> tuple[list[str], list[tuple]]:
    from . import analyses

    dims = run.dim_names()
    if what == "cluster_difficulty":
        table = analyses.cluster_difficulty_table(run) or {"clusters": []}
        columns = ["cluster", "size", *[f"weighted_difficulty {d}" for d in dims], "overall", *[f"mean_relevance {d}" for d in dims]]
        return columns, [(c["cluster"] + 1, c["size"], *c["weighted_difficulty"], c["overall"], *c["mean_relevance"])
                         for c in table["clusters"]]
    if what == "regressions":
        reg = analyses.dimension_regressions(run) or {"dimensions": []}
        return ["dimension", "name", "n_items", "n_relevant", "feature", "coef", "std_err", "p_value", "note"], [
            (d["dimension"] + 1, d["name"], d["n_items"], d["n_relevant"], t["feature"], t["coef"], t["std_err"], t["p_value"], d["note"])
            for d in reg["dimensions"] for t in (d["terms"] or [{"feature": None, "coef": None, "std_err": None, "p_value": None}])
        ]
    if what == "group_accuracy":
        acc = analyses.group_cluster_accuracy(run) or {"groups": []}
        return ["group", "label", "n_agents", "cluster", "cluster_size", "accuracy", "n_agents_in_cluster"], [
            (g["group"], g["label"], g["n_agents"], c["cluster"] + 1, c["size"], g["accuracy"][c["cluster"]],
             g["n_agents_by_cluster"][c["cluster"]])
            for g in acc["groups"] for c in acc["clusters"]
        ]
    raise ValueError(f"no CSV for {what}")


def figure_export(run: FitRun, what: str, fmt: str) -> Iterator[bytes]:
    """An analysis figure's numbers: `figures.json` has them all; each table also as CSV or JSON."""
    from . import analyses

    if what not in FIGURES or what == "romqa" or fmt not in ("csv", "json") or (what == "figures" and fmt == "csv"):
        raise ValueError("no such figure export")
    if fmt == "json":
        data = analyses.fit_figures(run)
        key = {"figures": None, "cluster_difficulty": "cluster_difficulty", "regressions": "dimension_regressions",
               "group_accuracy": "group_cluster_accuracy"}[what]
        return iter([json.dumps(data if key is None else data[key], indent=2, ensure_ascii=False).encode()])
    columns, rows = _figure_rows(run, what)
    return stream_csv(rows, columns)
