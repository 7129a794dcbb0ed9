"""The executing process of an agent run: any registered kind, any item set.

Order: claim the run, build the kind from the version's settings, `prepare(items)` once, then answer the
questions that have no answer yet in batches (`answer_many`), judge each with scoring.py (the live-play
judge) and commit each batch with its run keys; between batches the run's heartbeat, progress and cancel
flag are checked. A per-clue kind answers every tossup at each clue end q_k (one response per k).
Called by the Celery task (tasks.py) and by `agent_run --wait`; any number of calls for one run is safe.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections

from quizsite.core import liveness
from quizsite.items.models import Item, Response

from . import kinds, runs
from .kinds.base import AgentKind, Output, Question, question_for
from .models import AgentAnswer, AgentRun
from .runs import Answered, RunLost
from .scoring import agent_answer_score, agent_topk_score

log = logging.getLogger(__name__)
BATCH = 32


@dataclass(frozen=True)
class Task:
    item: Item
    clue_index: int | None  # tossups: the clue answered after; None: the whole item
    position: int  # the run key: words revealed (tossups), 0 otherwise


def run_tasks(kind: type[AgentKind], items: Sequence[Item]) -> list[Task]:
    """Every question a kind answers on these items, in a fixed order."""
    out: list[Task] = []
    for item in items:
        if item.kind == Item.Kind.TOSSUP:
            ends = [int(e) for e in item.data["clue_ends"]]
            clues = range(len(ends)) if kind.per_clue else [len(ends) - 1]
            out.extend(Task(item, k, ends[k]) for k in clues)
        else:
            out.append(Task(item, None, 0))
    return out


class _Heartbeat:
    """Beats every `every` seconds while the kind is busy in one long call (loading a model, indexing)."""

    def __init__(self, run_id: int, attempt: int, every: float) -> None:
        self.run_id, self.attempt, self.every = run_id, attempt, every
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"agent-run-{run_id}-heartbeat", daemon=True)

    def _loop(self) -> None:
        try:
            while not self._stop.wait(self.every):
                try:
                    if not runs.agentrun_heartbeat(run_id=self.run_id, attempt=self.attempt).owned:
                        self.lost.set()
                        return
                except Exception as exc:  # a locked database: the next beat tries again
                    log.info("agent run %s: heartbeat not written (%s)", self.run_id, exc)
        finally:
            connections.close_all()

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


class _Cancelled(Exception):
    pass


def agentrun_execute(*, run_id: int, worker_name: str = "") -> AgentRun:
    run = runs.agentrun_claim(run_id=run_id, worker=liveness.identity(worker_name))
    if run is None:
        run = AgentRun.objects.get(pk=run_id)
        log.info("agent run %s: nothing to do for this delivery (it is %s)", run_id, run.status)
        return run
    attempt = run.attempts
    t0 = time.perf_counter()
    spent = run.seconds or 0.0
    with _Heartbeat(run.pk, attempt, liveness.heartbeat_s()):
        try:
            _execute(run, attempt)
            status, error = AgentRun.Status.DONE, ""
        except RunLost:
            log.warning("agent run %s: attempt %s no longer owns the run; stopped", run_id, attempt)
            return AgentRun.objects.get(pk=run_id)
        except _Cancelled:
            status, error = AgentRun.Status.CANCELLED, "cancelled by a researcher"
        except Exception as exc:  # recorded on the run; the answers committed so far stay
            log.exception("agent run %s failed", run_id)
            status, error = (
                AgentRun.Status.FAILED,
                f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc(limit=8)}",
            )
    return runs.agentrun_finish(
        run_id=run_id,
        attempt=attempt,
        status=status,
        error=error,
        seconds=round(spent + time.perf_counter() - t0, 3),
    )


def _beat(run: AgentRun, attempt: int, **fields: Any) -> None:
    beat = runs.agentrun_heartbeat(run_id=run.pk, attempt=attempt, **fields)
    if not beat.owned:
        raise RunLost()
    if beat.cancel:
        raise _Cancelled()


def _execute(run: AgentRun, attempt: int) -> None:
    version = run.version
    registry = kinds.load_all()
    if version.config.kind not in registry:
        raise ValueError(f"agent kind {version.config.kind!r} is not registered in this process")
    cls = registry[version.config.kind]
    items = list(
        Item.objects.filter(item_set=run.item_set, kind__in=cls.item_kinds)
        .select_related("item_set")
        .order_by("id")
    )
    if not items:
        raise ValueError(
            f"item set {run.item_set.slug!r} has no items of the kinds {cls.name} answers ({', '.join(sorted(cls.item_kinds))})"
        )
    tasks = run_tasks(cls, items)
    have = {
        (item_id, position): correct
        for item_id, position, correct in AgentAnswer.objects.filter(
            version=version, item__in=items
        ).values_list("item_id", "position", "correct")
    }
    wanted = {(t.item.pk, t.position) for t in tasks}
    done = sum(1 for key in have if key in wanted)
    correct = sum(1 for key, c in have.items() if key in wanted and c)
    pending = [t for t in tasks if (t.item.pk, t.position) not in have]
    _beat(run, attempt, phase="preparing", total=len(tasks), done=done, correct=correct)
    if not pending:
        return
    agent = cls(version.settings)
    agent.prepare(items)
    for start in range(0, len(pending), BATCH):
        _beat(run, attempt, phase="answering", done=done, correct=correct)
        batch = pending[start : start + BATCH]
        questions = [question_for(t.item, clue_index=t.clue_index) for t in batch]
        t1 = time.perf_counter()
        outputs = agent.answer_many(questions)
        per_ms = (time.perf_counter() - t1) * 1000 / max(1, len(batch))
        if len(outputs) != len(batch):
            raise ValueError(f"kind {cls.name} returned {len(outputs)} answers for {len(batch)} questions")
        answers = [
            _answered(run, version.agent_id, t, q, o, per_ms, cls.task)
            for t, q, o in zip(batch, questions, outputs, strict=True)
        ]
        runs.agentanswers_write(run_id=run.pk, attempt=attempt, version=version, answers=answers)
        done += len(batch)
        correct += sum(1 for a in answers if a.response.correct)
    _beat(run, attempt, phase="answered", done=done, correct=correct)


def _answered(
    run: AgentRun, agent_id: int, task: Task, question: Question, out: Output, per_ms: float, scoring_task: str = ""
) -> Answered:
    """Judge one output and build its response: the judged result in the columns, the raw output in meta."""
    item = task.item
    word_index = task.position if item.kind == Item.Kind.TOSSUP else None
    raw: dict[str, Any] = {
        "guess": out.guess,
        "confidence": out.confidence,
        "raw": out.raw,
        "latency_ms": out.latency_ms if out.latency_ms is not None else round(per_ms, 3),
        "tokens": out.tokens,
        "run": run.pk,
        "version": run.version_id,
    }
    candidates = [c for c in (getattr(out, "candidates", None) or []) if isinstance(c, str)]
    if candidates:
        scored, verdicts = agent_topk_score(item, candidates, word_index=word_index)
        raw["candidates"], raw["candidate_verdicts"] = candidates, verdicts
    else:
        scored = agent_answer_score(item, out.guess, word_index=word_index, task=scoring_task)
    given = out.guess if isinstance(out.guess, str) else " | ".join(out.guess)
    response = Response(
        agent_id=agent_id,
        item=item,
        source=Response.Source.AGENT_RUN,
        given=given[:10_000],
        choices=list(question.options) or None,
        verdict=scored.verdict,
        correct=scored.correct,
        score=scored.score,
        word_index=scored.word_index,
        clue_index=scored.clue_index,
        n_words=scored.n_words,
        judge_version=scored.judge_version,
        meta=raw,
    )
    return Answered(response=response, item_id=item.pk, position=task.position)
