"""`caimira` format: a folder of queries.jsonl, agents.jsonl and responses.jsonl (DATA.md, CAIMIRA.md).

The CAIMIRA release scores agents on clue prefixes of quizbowl tossups: query `q832_5` with `orig_qid`
q832 and `n_clues` 5 is the first five clues of tossup q832. Each such query becomes a `clue_prefix`
item. When a tossup's prefixes 1..n are all present and each extends the previous one, the full tossup
is also created as a playable `tossup` item (external id = orig_qid) whose clue ends come from the
prefixes, so live buzzes on it later map to the very same IRT items as the published rulings. A query
without clue structure is kept as published: one `clue_prefix` item (an IRT item) without orig_qid.

Agents keep their id as external id; human and human_group ids are local to a release, so they are
namespaced by the item set (`<set>:<id>`) and never merge across releases; AI systems keep the bare id
and so merge across releases (the same system answering two data sets).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from django.db import transaction

from quizsite.agents.models import Agent
from quizsite.items.importers.base import (
    ImportError_,
    ImportReport,
    answer_field,
    as_text,
    check_unique_ids,
    id_field,
    int_field,
    item_set_get_or_create,
    list_field,
    object_field,
    read_records,
    shown,
    text_field,
    tossup_field,
)
from quizsite.items.importers.limits import MAX_ANSWER_CHARS, MAX_CLUES
from quizsite.items.importers.records import existing_import_keys, occurrence_keys
from quizsite.items.models import Item, Response

from .records import agents_get_or_create, agents_subtype_set, subtype_field

AGENT_TYPES: dict[str, str] = {"human": Agent.Kind.HUMAN, "ai": Agent.Kind.AI, "human_group": Agent.Kind.HUMAN_GROUP, "human_team": Agent.Kind.HUMAN_GROUP}
QUERY_KEYS = ("id", "text", "answer")


def _ruling(path: Path, lineno: int, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    raise ImportError_(str(path), lineno, f"ruling must be 0 or 1, got {shown(value)}")


def _answer_of(path: Path, lineno: int, obj: dict[str, Any]) -> str:
    """The answer line: answerline_html, else answer, else the clean answers joined, each checked."""
    html = answer_field(path, lineno, obj, "answerline_html", required=False)
    plain = answer_field(path, lineno, obj, "answer", required=False)
    clean = [
        as_text(path, lineno, a, f"clean_answers[{i}]", max_chars=MAX_ANSWER_CHARS)
        for i, a in enumerate(list_field(path, lineno, obj, "clean_answers", required=False))
    ]
    answer = html or plain or " / ".join(clean)
    if len(answer) > MAX_ANSWER_CHARS:
        raise ImportError_(str(path), lineno, f"'clean_answers' together are longer than {MAX_ANSWER_CHARS:,} characters")
    return answer


def _read_queries(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Queries with id, text, orig_qid and answer checked and normalised in place (answer: the answer line)."""
    rows = []
    for lineno, obj in read_records(path):
        obj["id"] = id_field(path, lineno, obj, "id")
        obj["text"] = tossup_field(path, lineno, obj, "text")
        obj["answer"] = _answer_of(path, lineno, obj)
        text_field(path, lineno, obj, "category", required=False)
        text_field(path, lineno, obj, "summary", required=False)  # the answer's summary: embedded with the item
        metadata = object_field(path, lineno, obj, "metadata", required=False)
        text_field(path, lineno, metadata, "category", required=False, label="metadata.category")
        has_orig, has_n = obj.get("orig_qid") is not None, obj.get("n_clues") is not None
        if has_orig != has_n:
            raise ImportError_(str(path), lineno, "orig_qid and n_clues come together (a clue prefix needs both)")
        if has_n:
            obj["orig_qid"] = id_field(path, lineno, obj, "orig_qid")
            int_field(path, lineno, obj, "n_clues", minimum=1, maximum=MAX_CLUES)
        if obj.get("total_clues") is not None:
            int_field(path, lineno, obj, "total_clues", minimum=1, maximum=MAX_CLUES)
        rows.append((lineno, obj))
    check_unique_ids(path, [(lineno, obj["id"]) for lineno, obj in rows])
    return rows


def _whole_tossups(queries: list[tuple[int, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Tossups rebuilt from complete, consistent prefix chains: {orig_qid: {text, answer, clue_ends, ...}}."""
    chains: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _lineno, obj in queries:
        if obj.get("orig_qid") is not None:
            chains[str(obj["orig_qid"])].append(obj)
    out = {}
    for orig, chain in chains.items():
        chain.sort(key=lambda q: q["n_clues"])
        total = chain[-1].get("total_clues") or chain[-1]["n_clues"]
        if [q["n_clues"] for q in chain] != list(range(1, total + 1)):
            continue  # a gap: the tossup cannot be rebuilt clue by clue
        words = [q["text"].split() for q in chain]
        if any(longer[: len(shorter)] != shorter for shorter, longer in zip(words, words[1:], strict=False)):
            continue
        last = chain[-1]
        out[orig] = {
            "text": last["text"],
            "answer": last["answer"],
            "category": str(last.get("category") or (last.get("metadata") or {}).get("category") or ""),
            "data": {"words": words[-1], "clue_ends": [len(w) for w in words], "power_index": None, "from_caimira": True},
        }
        if last.get("summary"):  # the rebuilt tossup's clue items embed the same text as the published prefixes
            out[orig]["data"]["summary"] = last["summary"]
    return out


def import_caimira(*, path: Path, set_slug: str, set_name: str = "") -> ImportReport:
    folder = Path(path)
    if not folder.is_dir():
        raise ImportError_(str(folder), 0, "the caimira format is a folder with queries.jsonl, agents.jsonl, responses.jsonl")
    q_path, a_path, r_path = (folder / f"{name}.jsonl" for name in ("queries", "agents", "responses"))

    queries = _read_queries(q_path)
    query_ids = {obj["id"] for _lineno, obj in queries}

    agents_by_kind: dict[str, dict[str, str]] = defaultdict(dict)
    agent_key: dict[str, tuple[str, str]] = {}  # file id -> (kind, external id)
    agent_lines = []
    subtypes: dict[str, str] = {}  # file id -> sub-type, when agents.jsonl names one
    for lineno, obj in read_records(a_path):
        aid = id_field(a_path, lineno, obj, "id")
        atype = text_field(a_path, lineno, obj, "type", required=False)
        if atype not in AGENT_TYPES:
            raise ImportError_(str(a_path), lineno, f"type must be one of {', '.join(AGENT_TYPES)}, got {atype[:40]!r}")
        kind = AGENT_TYPES[atype]
        ext_id = aid if kind == Agent.Kind.AI else f"{set_slug}:{aid}"
        if len(ext_id) > 200:
            raise ImportError_(str(a_path), lineno, "id longer than 200 characters")
        agent_lines.append((lineno, aid))
        agents_by_kind[kind][ext_id] = text_field(a_path, lineno, obj, "name", required=False) or aid
        agent_key[aid] = (kind, ext_id)
        subtypes[aid] = subtype_field(a_path, lineno, obj)
    check_unique_ids(a_path, agent_lines)

    responses = []
    for lineno, obj in read_records(r_path):
        qid, aid = id_field(r_path, lineno, obj, "query_id"), id_field(r_path, lineno, obj, "agent_id")
        if qid not in query_ids:
            raise ImportError_(str(r_path), lineno, f"unknown query_id {qid!r} (not in queries.jsonl)")
        if aid not in agent_key:
            raise ImportError_(str(r_path), lineno, f"unknown agent_id {aid!r} (not in agents.jsonl)")
        value = obj["ruling"] if "ruling" in obj else obj.get("score")
        if value is None:
            raise ImportError_(str(r_path), lineno, "missing field 'ruling'")
        given = (text_field(r_path, lineno, obj, "prediction", required=False)
                 or text_field(r_path, lineno, obj, "guess", required=False))
        responses.append((qid, aid, _ruling(r_path, lineno, value), given))

    tossups = _whole_tossups(queries)
    report = ImportReport(item_set=set_slug)
    with transaction.atomic():
        item_set = item_set_get_or_create(slug=set_slug, name=set_name, source=folder.name)
        existing = set(Item.objects.filter(item_set=item_set).values_list("external_id", flat=True))
        new_items = []
        for _lineno, obj in queries:
            if obj["id"] in existing:
                report.existing += 1
                continue
            extra = {k: v for k, v in obj.items() if k not in QUERY_KEYS}
            if obj.get("orig_qid") is not None:
                extra["orig_qid"] = str(obj["orig_qid"])
            new_items.append(
                Item(item_set=item_set, external_id=obj["id"], kind=Item.Kind.CLUE_PREFIX, text=obj["text"], answer=obj["answer"],
                     category=str(obj.get("category") or "")[:100], data=extra)
            )
        n_tossups = 0
        for orig, tossup in tossups.items():
            if orig in query_ids:
                continue
            if orig in existing:
                report.existing += 1
                continue
            n_tossups += 1
            new_items.append(
                Item(item_set=item_set, external_id=orig, kind=Item.Kind.TOSSUP, text=tossup["text"],
                     answer=tossup["answer"], category=tossup["category"][:100], data=tossup["data"])
            )
        Item.objects.bulk_create(new_items, batch_size=500)
        report.created = len(new_items)
        report.extra["tossups rebuilt from prefixes"] = n_tossups

        agents: dict[str, Agent] = {}
        created_agents = 0
        for kind, names in agents_by_kind.items():
            by_ext, n_new = agents_get_or_create(kind=kind, names=names, meta={"imported_from": set_slug})
            created_agents += n_new
            agents.update({aid: by_ext[ext] for aid, (k, ext) in agent_key.items() if k == kind})
        report.extra["new agents"] = created_agents
        n_subtypes = agents_subtype_set(agents=agents, subtypes=subtypes)
        if n_subtypes:
            report.extra["agent sub-types set"] = n_subtypes

        items = {i.external_id: i for i in Item.objects.filter(item_set=item_set, external_id__in=query_ids)}
        done = existing_import_keys(item_set, "caimira:")
        keys = occurrence_keys("caimira", (f"{qid}|{aid}" for qid, aid, _c, _g in responses))
        new_rows = []
        for key, (qid, aid, correct, given) in zip(keys, responses, strict=True):
            if key in done:
                continue
            item = items[qid]
            n_clues = item.data.get("n_clues")
            new_rows.append(
                Response(
                    agent=agents[aid], item=item, source=Response.Source.IMPORT, given=str(given),
                    verdict=Response.Verdict.ACCEPT if correct else Response.Verdict.REJECT, correct=correct,
                    clue_index=n_clues - 1 if isinstance(n_clues, int) else None,
                    meta={"import_key": key},
                )
            )
        Response.objects.bulk_create(new_rows, batch_size=1000)
        report.extra["new responses"] = len(new_rows)
        report.extra["responses already present"] = len(responses) - len(new_rows)
    return report
