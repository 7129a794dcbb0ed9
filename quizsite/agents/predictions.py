"""Import an AI system's answers (predictions) and score them with the project's judge.

JSON lines, one answer each:
    {"agent": "my-model", "item_set": "demo-tossups", "item_id": "demo-lit-001", "guess": "Claude Monet",
     "word_index": 42 | "clue_index": 2 (tossups: how much of the text the agent saw; default: all),
     "confidence": 0.7 (optional), "meta": {...} (optional),
     "subtype": "instruct" (optional: the agent's sub-type, one of Agent.Subtype; blank leaves it as it is)}
`guess` is a string, or for romqa a list of candidate texts. Like every importer it checks the whole file
first, every field's type included (a wrong one is a file:line error, never stored as its Python repr),
and writes in one transaction; a line already imported (same agent, item, position, guess) is
skipped, so importing twice adds nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction

from quizsite.items.importers.base import (
    ImportError_,
    as_text,
    id_field,
    int_field,
    object_field,
    read_records,
    text_field,
    what,
)
from quizsite.items.importers.limits import MAX_ANSWER_CHARS, MAX_CLUES, MAX_ID_CHARS, MAX_TOSSUP_WORDS
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


@dataclass(frozen=True)
class _Line:
    """One prediction whose fields have passed their type checks."""

    lineno: int
    agent: str
    item_set: str
    item_id: str
    guess: str | list[str]
    word_index: int | None
    clue_index: int | None
    confidence: float | None
    meta: dict[str, Any] | None


def _guess_field(path: Path, lineno: int, obj: dict[str, Any]) -> str | list[str]:
    """Text, or a list of texts (romqa). Checked here, before the judge, so that no other type is ever
    stored as its JSON in `given`; whether the shape suits the item is the scorer's to say. The text is
    kept as written (blank too): it is part of the line's import key."""
    if "guess" not in obj:
        raise ImportError_(str(path), lineno, "missing field 'guess'")
    guess = obj["guess"]
    if isinstance(guess, str):
        as_text(path, lineno, guess, "guess", required=False)  # its length
        return guess
    if not isinstance(guess, list):
        raise ImportError_(str(path), lineno, f"'guess' must be text or a list of texts, got {what(guess)}")
    for i, candidate in enumerate(guess):
        if not isinstance(candidate, str):
            raise ImportError_(str(path), lineno, f"'guess[{i}]' must be text, got {what(candidate)}")
        as_text(path, lineno, candidate, f"guess[{i}]", required=False, max_chars=MAX_ANSWER_CHARS)
    return guess


def _line_parse(path: Path, lineno: int, obj: dict[str, Any], agent_name: str) -> _Line:
    """Every field's type is checked, so a wrong one is a file:line error, never its Python repr stored
    as an agent's name (str({"x": 1})) nor a bool taken for a position (True == 1)."""
    agent = as_text(path, lineno, obj.get("agent"), "agent", required=False, max_chars=MAX_ID_CHARS) or agent_name
    if not agent:
        raise ImportError_(str(path), lineno, "no agent: give an 'agent' field or --agent")
    positions = {
        field: int_field(path, lineno, obj, field, minimum=0, maximum=maximum) if obj.get(field) is not None else None
        for field, maximum in (("word_index", MAX_TOSSUP_WORDS), ("clue_index", MAX_CLUES))
    }
    confidence = obj.get("confidence")
    if confidence is not None and (isinstance(confidence, bool) or not isinstance(confidence, int | float)):
        # any finite number (check_value refused NaN): agent kinds report margins and similarities too
        raise ImportError_(str(path), lineno, f"'confidence' must be a number, got {what(confidence)}")
    return _Line(
        lineno=lineno,
        agent=agent,
        item_set=text_field(path, lineno, obj, "item_set", max_chars=MAX_ID_CHARS),
        item_id=id_field(path, lineno, obj, "item_id"),
        guess=_guess_field(path, lineno, obj),
        word_index=positions["word_index"],
        clue_index=positions["clue_index"],
        confidence=confidence,
        meta=object_field(path, lineno, obj, "meta", required=False) if obj.get("meta") is not None else None,
    )


def predictions_import(*, path: Path, agent_name: str = "") -> PredictionReport:
    path = Path(path)
    lines = [(_line_parse(path, lineno, obj, agent_name), obj) for lineno, obj in read_records(path)]
    wanted = {(line.item_set, line.item_id) for line, _ in lines}
    items = {
        (i.item_set.slug, i.external_id): i
        for i in Item.objects.select_related("item_set").filter(
            item_set__slug__in={s for s, _ in wanted}, external_id__in={e for _, e in wanted}
        )
    }
    rows = []
    subtypes: dict[str, str] = {}
    for line, obj in lines:
        lineno, name = line.lineno, line.agent
        subtype = subtype_field(path, lineno, obj)
        if subtype and subtypes.setdefault(name, subtype) != subtype:
            raise ImportError_(str(path), lineno, f"agent {name!r} has sub-type {subtypes[name]!r} on an earlier line, {subtype!r} here")
        item = items.get((line.item_set, line.item_id))
        if item is None:
            raise ImportError_(str(path), lineno, f"unknown item {line.item_set}/{line.item_id}")
        try:
            scored = agent_answer_score(item, line.guess, word_index=line.word_index, clue_index=line.clue_index)
        except ValueError as exc:
            raise ImportError_(str(path), lineno, str(exc)) from None
        rows.append((line, item, scored))

    report = PredictionReport()
    with transaction.atomic():
        agents, _ = agents_get_or_create(kind=Agent.Kind.AI, names={line.agent: line.agent for line, *_ in rows})
        report.agents = len(agents)
        agents_subtype_set(agents=agents, subtypes=subtypes)
        seen = set(
            Response.objects.filter(agent__in=agents.values(), source=Response.Source.AGENT_RUN)
            .filter(meta__has_key="prediction_key")
            .values_list("meta__prediction_key", flat=True)
        )
        new = []
        for line, item, scored in rows:
            key = _key(line.agent, item.pk, scored.word_index, line.guess)
            if key in seen:
                report.existing += 1
                continue
            seen.add(key)
            given = line.guess if isinstance(line.guess, str) else json.dumps(line.guess, ensure_ascii=False)
            meta: dict[str, Any] = {"prediction_key": key}
            if line.confidence is not None:
                meta["confidence"] = line.confidence
            if line.meta is not None:
                meta["agent_meta"] = line.meta
            new.append(
                Response(
                    agent=agents[line.agent], item=item, source=Response.Source.AGENT_RUN, given=given[:10_000],
                    verdict=scored.verdict, correct=scored.correct, score=scored.score,
                    word_index=scored.word_index, clue_index=scored.clue_index, n_words=scored.n_words,
                    judge_version=scored.judge_version, meta=meta,
                )
            )
            report.correct += scored.correct
        Response.objects.bulk_create(new, batch_size=1000)
        report.created = len(new)
    return report
