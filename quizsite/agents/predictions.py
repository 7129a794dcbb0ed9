"""Import an AI system's answers (predictions) and score them with the project's judge.

JSON lines, one answer each:
    {"agent": "my-model", "item_set": "demo-tossups", "item_id": "demo-lit-001", "guess": "Claude Monet",
     "word_index": 42 | "clue_index": 2 (tossups: how much of the text the agent saw; default: all),
     "confidence": 0.7 (optional), "meta": {...} (optional),
     "subtype": "instruct" (optional: the agent's sub-type, one of Agent.Subtype; blank leaves it as it is)}
`guess` is a string, or for romqa a list of candidate texts. Like every importer it checks the whole file
first and writes in one transaction; a line already imported (same agent, item, position, guess) is
skipped, so importing twice adds nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from quizsite.items.importers.base import ImportError_, read_records, require
from quizsite.items.models import Item, Response

from .importers.records import agents_get_or_create, agents_subtype_set, subtype_field
from .models import Agent
from .scoring import agent_answer_score


@dataclass
class PredictionReport:
    created: int = 0
    existing: int = 0
    agents: int = 0
    correct: int = 0

    def summary(self) -> str:
        acc = f", accuracy {self.correct / self.created:.3f}" if self.created else ""
        return f"{self.created} new responses from {self.agents} agents, {self.existing} already present{acc}"


def _key(agent: str, item_id: int, position: object, guess: object) -> str:
    return hashlib.sha1(json.dumps([agent, item_id, position, guess], sort_keys=True).encode()).hexdigest()


def predictions_import(*, path: Path, agent_name: str = "") -> PredictionReport:
    path = Path(path)
    records = list(read_records(path))
    wanted = {(str(o.get("item_set", "")), str(o.get("item_id", ""))) for _, o in records}
    items = {
        (i.item_set.slug, i.external_id): i
        for i in Item.objects.select_related("item_set").filter(
            item_set__slug__in={s for s, _ in wanted}, external_id__in={e for _, e in wanted}
        )
    }
    rows = []
    subtypes: dict[str, str] = {}
    for lineno, obj in records:
        require(path, lineno, obj, "item_set", "item_id")
        if "guess" not in obj:
            raise ImportError_(str(path), lineno, "missing field 'guess'")
        name = str(obj.get("agent") or agent_name)
        if not name:
            raise ImportError_(str(path), lineno, "no agent: give an 'agent' field or --agent")
        subtype = subtype_field(path, lineno, obj)
        if subtype and subtypes.setdefault(name, subtype) != subtype:
            raise ImportError_(str(path), lineno, f"agent {name!r} has sub-type {subtypes[name]!r} on an earlier line, {subtype!r} here")
        item = items.get((str(obj["item_set"]), str(obj["item_id"])))
        if item is None:
            raise ImportError_(str(path), lineno, f"unknown item {obj['item_set']}/{obj['item_id']}")
        for field in ("word_index", "clue_index"):
            if obj.get(field) is not None and not isinstance(obj[field], int):
                raise ImportError_(str(path), lineno, f"{field} must be an integer")
        try:
            scored = agent_answer_score(item, obj["guess"], word_index=obj.get("word_index"), clue_index=obj.get("clue_index"))
        except ValueError as exc:
            raise ImportError_(str(path), lineno, str(exc)) from None
        rows.append((name, item, obj, scored))

    report = PredictionReport()
    with transaction.atomic():
        agents, _ = agents_get_or_create(kind=Agent.Kind.AI, names={name: name for name, *_ in rows})
        report.agents = len(agents)
        agents_subtype_set(agents=agents, subtypes=subtypes)
        seen = set(
            Response.objects.filter(agent__in=agents.values(), source=Response.Source.AGENT_RUN)
            .filter(meta__has_key="prediction_key")
            .values_list("meta__prediction_key", flat=True)
        )
        new = []
        for name, item, obj, scored in rows:
            key = _key(name, item.pk, scored.word_index, obj["guess"])
            if key in seen:
                report.existing += 1
                continue
            seen.add(key)
            given = obj["guess"] if isinstance(obj["guess"], str) else json.dumps(obj["guess"], ensure_ascii=False)
            meta = {"prediction_key": key, **({"confidence": obj["confidence"]} if "confidence" in obj else {})}
            if isinstance(obj.get("meta"), dict):
                meta["agent_meta"] = obj["meta"]
            new.append(
                Response(
                    agent=agents[name], item=item, source=Response.Source.AGENT_RUN, given=given[:10_000],
                    verdict=scored.verdict, correct=scored.correct, score=scored.score,
                    word_index=scored.word_index, clue_index=scored.clue_index, n_words=scored.n_words,
                    judge_version=scored.judge_version, meta=meta,
                )
            )
            report.correct += scored.correct
        Response.objects.bulk_create(new, batch_size=1000)
        report.created = len(new)
    return report
