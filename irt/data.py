"""Reading and validating the CAIMIRA file formats (JSON lines + ``.npz`` embeddings).

Every problem with the input is reported as :class:`IRTDataError` whose message starts with the
place it was found, ``path:line: message`` for files and ``responses[12]: message`` for in-memory
records, so a researcher can open the file at the right line.

Formats (see ``CAIMIRA.md``):

* queries: ``{"id", "text", ...}``; other fields are kept (templates and grouped splits use them)
* agents: ``{"id", "name", "type"}``; ``name`` defaults to ``id``, ``type`` to ``"unknown"``
* responses: ``{"query_id", "agent_id", "ruling"}``, ruling 0 or 1 (``true``/``false`` and
  ``0.0``/``1.0`` are accepted too; anything else is an error)
* pairs (for ``predict``): ``{"query_id", "agent_id"}``
* embeddings: ``.npz`` with ``ids`` (str) and ``embeddings`` (float, one row per id); optional
  ``model`` and ``template`` (0-d str arrays) record how they were made
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "IRTDataError",
    "Responses",
    "FitData",
    "read_jsonl",
    "load_queries",
    "load_agents",
    "load_responses",
    "load_pairs",
    "load_embeddings",
    "save_embeddings",
    "validate_queries",
    "validate_agents",
    "validate_responses",
    "validate_pairs",
]


class IRTDataError(ValueError):
    """Bad input data. The message starts with ``path:line:`` (or ``source[index]:``)."""


Located = tuple[str, dict[str, Any]]
"""A record with the place it came from (``"path:line"`` or ``"responses[3]"``)."""


def read_jsonl(path: str | Path) -> Iterator[Located]:
    """Yield ``("path:line", record)`` for every non-blank line of a JSON-lines file.

    Raises :class:`IRTDataError` for a missing file, a line that is not JSON or not an object,
    and for a file without any record.
    """
    p = Path(path)
    if not p.is_file():
        raise IRTDataError(f"{p}: no such file")
    n = 0
    with p.open("r", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{p}:{lineno}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise IRTDataError(f"{where}: not valid JSON ({exc.msg})") from None
            if not isinstance(rec, dict):
                raise IRTDataError(f"{where}: expected a JSON object, got {type(rec).__name__}")
            n += 1
            yield where, rec
    if n == 0:
        raise IRTDataError(f"{p}: empty file (no records)")


def _located(records: Iterable[dict[str, Any]], source: str) -> list[Located]:
    out = [(f"{source}[{i}]", r) for i, r in enumerate(records)]
    if not out:
        raise IRTDataError(f"{source}: empty (no records)")
    for where, r in out:
        if not isinstance(r, dict):
            raise IRTDataError(f"{where}: expected a mapping, got {type(r).__name__}")
    return out


def _id(where: str, rec: dict[str, Any], key: str) -> str:
    if key not in rec:
        raise IRTDataError(f"{where}: missing field {key!r}")
    v = rec[key]
    if isinstance(v, bool) or not isinstance(v, str | int):
        raise IRTDataError(f"{where}: field {key!r} must be a string, got {v!r}")
    s = str(v)
    if not s:
        raise IRTDataError(f"{where}: field {key!r} is empty")
    return s


def _ruling(where: str, rec: dict[str, Any]) -> int:
    if "ruling" not in rec:
        raise IRTDataError(f"{where}: missing field 'ruling'")
    v = rec["ruling"]
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int | float) and v in (0, 1):
        return int(v)
    raise IRTDataError(f"{where}: ruling must be 0 or 1, got {v!r}")


# --------------------------------------------------------------------------- validators


def validate_queries(located: Iterable[Located], require_text: bool = True) -> list[dict[str, Any]]:
    """Check ids are present and unique and ``text`` is a string; return the records (``id`` as str)."""
    seen: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for where, rec in located:
        qid = _id(where, rec, "id")
        if qid in seen:
            raise IRTDataError(f"{where}: duplicate query id {qid!r} (first at {seen[qid]})")
        seen[qid] = where
        if require_text or "text" in rec:
            if not isinstance(rec.get("text"), str):
                raise IRTDataError(f"{where}: field 'text' must be a string")
        out.append({**rec, "id": qid})
    return out


def validate_agents(located: Iterable[Located]) -> list[dict[str, Any]]:
    """Check ids are present and unique; fill ``name`` (= id) and ``type`` (= ``"unknown"``)."""
    seen: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for where, rec in located:
        aid = _id(where, rec, "id")
        if aid in seen:
            raise IRTDataError(f"{where}: duplicate agent id {aid!r} (first at {seen[aid]})")
        seen[aid] = where
        atype = rec.get("type", "unknown")
        if not isinstance(atype, str) or not atype:
            raise IRTDataError(f"{where}: field 'type' must be a non-empty string, got {atype!r}")
        out.append({**rec, "id": aid, "name": str(rec.get("name", aid)), "type": atype})
    return out


@dataclass
class Responses:
    """Responses as index arrays into an item list and an agent list."""

    agent_idx: np.ndarray  # int64 (n,)
    item_idx: np.ndarray  # int64 (n,)
    ruling: np.ndarray  # float32 (n,), 0.0 or 1.0

    def __len__(self) -> int:
        return len(self.ruling)

    def subset(self, mask: np.ndarray) -> Responses:
        return Responses(self.agent_idx[mask], self.item_idx[mask], self.ruling[mask])


def validate_responses(
    located: Iterable[Located],
    item_index: dict[str, int],
    agent_index: dict[str, int],
    queries_source: str = "the queries",
    agents_source: str = "the agents",
) -> Responses:
    """Map responses to index arrays; unknown ids and rulings other than 0/1 are errors."""
    a: list[int] = []
    q: list[int] = []
    y: list[int] = []
    for where, rec in located:
        qid = _id(where, rec, "query_id")
        aid = _id(where, rec, "agent_id")
        if qid not in item_index:
            raise IRTDataError(f"{where}: unknown query_id {qid!r} (not in {queries_source})")
        if aid not in agent_index:
            raise IRTDataError(f"{where}: unknown agent_id {aid!r} (not in {agents_source})")
        y.append(_ruling(where, rec))
        q.append(item_index[qid])
        a.append(agent_index[aid])
    return Responses(
        np.asarray(a, dtype=np.int64), np.asarray(q, dtype=np.int64), np.asarray(y, dtype=np.float32)
    )


def validate_pairs(located: Iterable[Located], agent_index: dict[str, int]) -> list[tuple[str, str]]:
    """``(query_id, agent_id)`` pairs; the agent must be known (the query may be new)."""
    out: list[tuple[str, str]] = []
    for where, rec in located:
        qid = _id(where, rec, "query_id")
        aid = _id(where, rec, "agent_id")
        if aid not in agent_index:
            raise IRTDataError(f"{where}: unknown agent_id {aid!r} (not in the fit)")
        out.append((qid, aid))
    return out


# --------------------------------------------------------------------------- file loaders


def load_queries(path: str | Path, require_text: bool = True) -> list[dict[str, Any]]:
    return validate_queries(read_jsonl(path), require_text=require_text)


def load_agents(path: str | Path) -> list[dict[str, Any]]:
    return validate_agents(read_jsonl(path))


def load_responses(
    path: str | Path,
    item_index: dict[str, int],
    agent_index: dict[str, int],
    queries_source: str = "the queries",
    agents_source: str = "the agents",
) -> Responses:
    return validate_responses(read_jsonl(path), item_index, agent_index, queries_source, agents_source)


def load_pairs(path: str | Path, agent_index: dict[str, int]) -> list[tuple[str, str]]:
    return validate_pairs(read_jsonl(path), agent_index)


def load_embeddings(path: str | Path) -> tuple[list[str], np.ndarray, dict[str, str]]:
    """Read an embeddings ``.npz``: ``(ids, float32 matrix, metadata)``.

    Errors name the file and the offending row/id: missing arrays, shape mismatch, duplicate ids,
    and rows with NaN or infinite values.
    """
    p = Path(path)
    if not p.is_file():
        raise IRTDataError(f"{p}: no such file")
    try:
        with np.load(p, allow_pickle=False) as z:
            files = set(z.files)
            for key in ("ids", "embeddings"):
                if key not in files:
                    raise IRTDataError(f"{p}: missing array {key!r} (has {sorted(files)})")
            ids = [str(x) for x in z["ids"].tolist()]
            emb = np.asarray(z["embeddings"])
            meta = {k: str(z[k]) for k in ("model", "template") if k in files}
    except IRTDataError:
        raise
    except Exception as exc:  # zipfile / format errors
        raise IRTDataError(f"{p}: not a readable .npz file ({exc})") from None
    if emb.ndim != 2:
        raise IRTDataError(f"{p}: 'embeddings' must be 2-d, got shape {emb.shape}")
    if emb.shape[0] != len(ids):
        raise IRTDataError(f"{p}: {len(ids)} ids but {emb.shape[0]} embedding rows")
    if emb.shape[0] == 0:
        raise IRTDataError(f"{p}: empty file (no embeddings)")
    if not np.issubdtype(emb.dtype, np.number):
        raise IRTDataError(f"{p}: 'embeddings' must be numeric, got {emb.dtype}")
    emb = emb.astype(np.float32, copy=False)
    bad = ~np.isfinite(emb).all(axis=1)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise IRTDataError(
            f"{p}: embedding row {row} (id {ids[row]!r}) contains NaN or infinite values"
            f" ({int(bad.sum())} bad rows)"
        )
    seen: dict[str, int] = {}
    for i, x in enumerate(ids):
        if x in seen:
            raise IRTDataError(f"{p}: duplicate id {x!r} at rows {seen[x]} and {i}")
        seen[x] = i
    return ids, emb, meta


def save_embeddings(
    path: str | Path, ids: Sequence[str], embeddings: np.ndarray, meta: dict[str, str] | None = None
) -> None:
    """Write the ``.npz`` format that :func:`load_embeddings` reads."""
    arrays: dict[str, Any] = {
        "ids": np.asarray(list(ids), dtype=str),
        "embeddings": np.asarray(embeddings, dtype=np.float32),
    }
    for k, v in (meta or {}).items():
        arrays[k] = np.asarray(str(v))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:  # np.savez would append .npz to a name without it
        np.savez(fh, **arrays)


# --------------------------------------------------------------------------- fit data


@dataclass
class FitData:
    """Everything a fit needs, already validated and indexed.

    ``responses`` index into ``items``/``agents``. ``embeddings`` (``len(items) x n``) is needed by
    ``caimira`` only. ``val_responses``, when set, is the explicit validation set (otherwise the
    trainer splits ``responses`` by a seeded hash). ``source`` (file names) and ``meta`` (anything
    JSON-serialisable the caller wants kept, such as which human grouping made the agents) are
    written into the fit's metrics under ``"data"``.
    """

    items: list[dict[str, Any]]
    agents: list[dict[str, Any]]
    responses: Responses
    embeddings: np.ndarray | None = None
    val_responses: Responses | None = None
    embedder: dict[str, str] = field(default_factory=dict)
    source: dict[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. {"human_grouping": {...}}: recorded with the fit

    @property
    def item_ids(self) -> list[str]:
        return [q["id"] for q in self.items]

    @property
    def agent_ids(self) -> list[str]:
        return [a["id"] for a in self.agents]

    @property
    def agent_types(self) -> list[str]:
        return [a["type"] for a in self.agents]

    @classmethod
    def from_records(
        cls,
        queries: Iterable[dict[str, Any]],
        agents: Iterable[dict[str, Any]],
        responses: Iterable[dict[str, Any]],
        embeddings: tuple[Sequence[str], np.ndarray] | dict[str, Sequence[float]] | None = None,
        val_responses: Iterable[dict[str, Any]] | None = None,
        embedder: dict[str, str] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> FitData:
        """Build from in-memory records (the Django side). Errors read ``responses[i]: ...``."""
        items = validate_queries(_located(queries, "queries"), require_text=False)
        ags = validate_agents(_located(agents, "agents"))
        data = cls._build(
            items,
            ags,
            _located(responses, "responses"),
            None if val_responses is None else _located(val_responses, "val_responses"),
            embeddings,
            "embeddings",
            dict(embedder or {}),
            {"queries": "queries", "agents": "agents"},
        )
        data.meta = dict(meta or {})
        return data

    @classmethod
    def from_files(
        cls,
        queries: str | Path,
        agents: str | Path,
        responses: str | Path,
        embeddings: str | Path | None = None,
        val_responses: str | Path | None = None,
    ) -> FitData:
        """Load and validate the CAIMIRA files. Errors read ``path:line: ...``."""
        items = load_queries(queries, require_text=False)
        ags = load_agents(agents)
        emb: tuple[Sequence[str], np.ndarray] | None = None
        meta: dict[str, str] = {}
        if embeddings is not None:
            ids, mat, meta = load_embeddings(embeddings)
            emb = (ids, mat)
        return cls._build(
            items,
            ags,
            read_jsonl(responses),
            None if val_responses is None else read_jsonl(val_responses),
            emb,
            str(embeddings),
            meta,
            {"queries": str(queries), "agents": str(agents), "responses": str(responses)},
        )

    @classmethod
    def _build(
        cls,
        items: list[dict[str, Any]],
        agents: list[dict[str, Any]],
        responses: Iterable[Located],
        val_responses: Iterable[Located] | None,
        embeddings: tuple[Sequence[str], np.ndarray] | dict[str, Sequence[float]] | None,
        emb_source: str,
        embedder: dict[str, str],
        source: dict[str, str],
    ) -> FitData:
        item_index = {q["id"]: i for i, q in enumerate(items)}
        agent_index = {a["id"]: i for i, a in enumerate(agents)}
        qs, ags = source.get("queries", "the queries"), source.get("agents", "the agents")
        resp = validate_responses(responses, item_index, agent_index, qs, ags)
        val = None
        if val_responses is not None:
            val = validate_responses(val_responses, item_index, agent_index, qs, ags)
        mat = None
        if embeddings is not None:
            mat = align_embeddings(items, embeddings, emb_source, qs)
        return cls(items, agents, resp, mat, val, embedder, source)

    def split_keys(self, group: str = "pair") -> list[str]:
        """Keys that the validation hash split uses for each response.

        ``"pair"``: query id and agent id; ``"query"``: the query id (whole items go to validation);
        any other name: that query field (e.g. ``"orig_qid"``: whole tossups go to validation). An agent
        record's optional ``split_key`` stands in for its id here: ids that are drawn per installation
        (the app's pseudonyms) would otherwise split the same responses differently in every one.
        """
        ids = self.item_ids
        aids = [str(a.get("split_key") or a["id"]) for a in self.agents]
        r = self.responses
        if group == "pair":
            return [f"{ids[q]}|{aids[a]}" for q, a in zip(r.item_idx.tolist(), r.agent_idx.tolist(), strict=True)]
        if group == "query":
            return [ids[q] for q in r.item_idx.tolist()]
        per_item: list[str] = []
        for q in self.items:
            if group not in q:
                raise IRTDataError(f"query {q['id']!r}: has no field {group!r} to group the validation split by")
            per_item.append(str(q[group]))
        return [per_item[q] for q in r.item_idx.tolist()]


def align_embeddings(
    items: Sequence[dict[str, Any]],
    embeddings: tuple[Sequence[str], np.ndarray] | dict[str, Sequence[float]],
    source: str = "embeddings",
    queries_source: str = "the queries",
) -> np.ndarray:
    """One embedding row per item, in item order; every item must have one and all must be finite."""
    if isinstance(embeddings, dict):
        ids = list(embeddings)
        mat = np.asarray([embeddings[k] for k in ids], dtype=np.float32)
    else:
        ids, mat = list(embeddings[0]), np.asarray(embeddings[1], dtype=np.float32)
    if mat.ndim != 2 or mat.shape[0] != len(ids):
        raise IRTDataError(f"{source}: expected one row per id, got shape {mat.shape} for {len(ids)} ids")
    index = {x: i for i, x in enumerate(ids)}
    rows: list[int] = []
    for q in items:
        if q["id"] not in index:
            raise IRTDataError(f"{source}: no embedding for query id {q['id']!r} (from {queries_source})")
        rows.append(index[q["id"]])
    out = mat[np.asarray(rows, dtype=np.int64)]
    bad = ~np.isfinite(out).all(axis=1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise IRTDataError(f"{source}: embedding for query id {items[i]['id']!r} contains NaN or infinite values")
    return np.ascontiguousarray(out)
