"""Writes for agent runs: start, cancel, resume, and the executing process's claim, progress and answers.

Liveness follows fit runs (quizsite/core/liveness.py, reused, not copied): the executing process
writes `heartbeat_at` at least every RESEARCH_FIT_HEARTBEAT_SECONDS; a running run whose heartbeat is
older than RESEARCH_FIT_LOST_AFTER_SECONDS, or whose process is seen to be gone, has lost its worker.
Unlike a fit, an agent run loses nothing when its worker dies: every answer is committed with its run key
(AgentAnswer), so a lost run goes back to the queue and the next attempt answers only what is missing,
up to AGENTS_RUN_MAX_RETRIES times (default 2), after which it fails and `agent_run --resume` or the
page's Resume button queues it again. Every write of the executing process is conditional on that
attempt still owning the run, so a reaped or cancelled attempt never writes again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from quizsite.core import liveness
from quizsite.items.models import ItemSet, Response

from .models import AgentAnswer, AgentRun, AgentVersion

log = logging.getLogger(__name__)
AGENT_TASK = "agents.run"  # the Celery task (tasks.py), enqueued by name


class RunLost(Exception):
    """This attempt no longer owns the run (reaped, cancelled while lost, or claimed by a later attempt)."""


def max_retries() -> int:
    return max(0, int(getattr(settings, "AGENTS_RUN_MAX_RETRIES", 2)))


def _enqueue(run_id: int) -> None:
    result = current_app.tasks[AGENT_TASK].delay(run_id)
    AgentRun.objects.filter(pk=run_id).update(task_id=result.id or "")


def _enqueue_later(run_id: int) -> Callable[[], None]:
    return lambda: _enqueue(run_id)


def agentrun_create(*, version: AgentVersion, item_set: ItemSet, user=None) -> AgentRun:
    return AgentRun.objects.create(version=version, item_set=item_set, created_by=user, phase="queued")


def agentrun_start(*, version: AgentVersion, item_set: ItemSet, user=None) -> AgentRun:
    """Create the run and queue its Celery task once the row is committed (the worker must see it)."""
    with transaction.atomic():
        run = agentrun_create(version=version, item_set=item_set, user=user)
        transaction.on_commit(lambda: _enqueue(run.pk))
    return run


def _lost(run: AgentRun) -> str | None:
    return liveness.lost_reason(
        heartbeat_at=run.heartbeat_at or run.started_at,
        worker=run.worker or {},
        now=timezone.now(),
        bound=liveness.lost_after_s(),
    )


def _end(run: AgentRun, status: str, error: str) -> None:
    run.status, run.error, run.finished_at, run.phase = status, error[:20000], timezone.now(), status


def agentrun_cancel(*, run: AgentRun) -> AgentRun:
    """A queued run, or one whose worker is lost, is cancelled at once; a live one stops after its current
    batch (its answers so far stay: they are valid responses)."""
    with transaction.atomic():
        run = AgentRun.objects.select_for_update().get(pk=run.pk)
        if run.finished:
            return run
        run.cancel_requested = True
        if run.status == AgentRun.Status.QUEUED:
            _end(run, AgentRun.Status.CANCELLED, "cancelled before it started")
        elif (reason := _lost(run)) is not None:
            _end(run, AgentRun.Status.CANCELLED, f"cancelled ({reason})")
        run.save()
        return run


def agentrun_resume(*, run: AgentRun, enqueue: bool = True) -> AgentRun:
    """Queue a failed or cancelled run again; it answers only the questions that have no answer yet.
    `enqueue=False`: the caller executes it in its own process (`agent_run --resume N --wait`)."""
    with transaction.atomic():
        run = AgentRun.objects.select_for_update().get(pk=run.pk)
        if run.status not in (AgentRun.Status.FAILED, AgentRun.Status.CANCELLED):
            raise ValueError(f"only a failed or cancelled run can be resumed; run {run.pk} is {run.status}")
        run.status, run.cancel_requested, run.finished_at, run.phase = (
            AgentRun.Status.QUEUED,
            False,
            None,
            "queued",
        )
        run.worker, run.heartbeat_at, run.attempts = {}, None, 0
        run.save()
        if enqueue:
            transaction.on_commit(lambda: _enqueue(run.pk))
    return run


def _worker_lost(run: AgentRun, reason: str) -> str:
    """Apply the loss policy to a locked running row (not saved): 'cancelled', 'failed' or 'retry'."""
    run.lost = reason[:500]
    if run.cancel_requested:
        _end(run, AgentRun.Status.CANCELLED, f"cancelled ({reason})")
        return "cancelled"
    if run.attempts <= max_retries():
        log.warning(
            "agent run %s: %s; resumed (attempt %s of %s)",
            run.pk,
            reason,
            run.attempts + 1,
            max_retries() + 1,
        )
        return "retry"
    _end(
        run,
        AgentRun.Status.FAILED,
        f"{reason} (after {run.attempts} attempts; agent_run --resume {run.pk} tries again)",
    )
    return "failed"


def agentrun_claim(*, run_id: int, worker: dict[str, Any]) -> AgentRun | None:
    """The executing process takes the run, or gets None (finished, cancelled, or alive elsewhere).

    A delivery of a running run whose worker is lost (the message came back after its worker died)
    applies the loss policy, and on 'retry' this process resumes the run."""
    with transaction.atomic():
        run = AgentRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None:
            return None
        if run.status == AgentRun.Status.QUEUED:
            if run.cancel_requested:
                _end(run, AgentRun.Status.CANCELLED, run.error or "cancelled before it started")
                run.save()
                return None
        elif run.status == AgentRun.Status.RUNNING and (reason := _lost(run)) is not None:
            if _worker_lost(run, reason) != "retry":
                run.save()
                return None
        else:
            return None
        run.status, run.attempts, run.worker = AgentRun.Status.RUNNING, run.attempts + 1, worker
        run.started_at = run.started_at or timezone.now()
        run.heartbeat_at, run.error, run.phase = timezone.now(), "", "starting"
        run.save()
        return run


@dataclass(frozen=True)
class Beat:
    owned: bool
    cancel: bool = False


def agentrun_heartbeat(*, run_id: int, attempt: int, **fields: Any) -> Beat:
    """Attempt `attempt` is alive; `fields` (phase, total, done, correct, written) are written with the beat."""
    updated = AgentRun.objects.filter(pk=run_id, status=AgentRun.Status.RUNNING, attempts=attempt).update(
        heartbeat_at=timezone.now(), **fields
    )
    if not updated:
        return Beat(owned=False)
    return Beat(owned=True, cancel=AgentRun.objects.filter(pk=run_id, cancel_requested=True).exists())


@dataclass
class Answered:
    """One judged answer ready to store: the response (unsaved) and its position key."""

    response: Response
    item_id: int
    position: int


def agentanswers_write(*, run_id: int, attempt: int, version: AgentVersion, answers: list[Answered]) -> int:
    """Store a batch of answers with their run keys in one transaction; returns how many were new.

    Keys that exist already (written by an earlier attempt or another run of the same version) are
    skipped; a concurrent writer of the same key loses on the unique constraint and retries the batch."""
    for tries in range(3):
        try:
            with transaction.atomic():
                owner = AgentRun.objects.select_for_update().filter(
                    pk=run_id, status=AgentRun.Status.RUNNING, attempts=attempt
                )
                if not list(owner.only("pk")):  # evaluated, so the row is locked until the commit
                    raise RunLost()
                have = set(
                    AgentAnswer.objects.filter(
                        version=version, item_id__in={a.item_id for a in answers}
                    ).values_list("item_id", "position")
                )
                new = [a for a in answers if (a.item_id, a.position) not in have]
                Response.objects.bulk_create([a.response for a in new])
                AgentAnswer.objects.bulk_create(
                    [
                        AgentAnswer(
                            version=version,
                            item_id=a.item_id,
                            position=a.position,
                            run_id=run_id,
                            response=a.response,
                            correct=a.response.correct,
                        )
                        for a in new
                    ]
                )
                owner.update(written=F("written") + len(new))
                return len(new)
        except IntegrityError:
            if tries == 2:
                raise
    return 0


def agentrun_finish(
    *, run_id: int, attempt: int, status: str, error: str = "", seconds: float | None = None
) -> AgentRun:
    fields: dict[str, Any] = {
        "status": status,
        "error": error[:20000],
        "finished_at": timezone.now(),
        "phase": status,
    }
    if seconds is not None:
        fields["seconds"] = seconds
    AgentRun.objects.filter(pk=run_id, status=AgentRun.Status.RUNNING, attempts=attempt).update(**fields)
    return AgentRun.objects.get(pk=run_id)


def agentrun_reap_lost() -> list[AgentRun]:
    """Resume (or end) every running agent run whose worker is lost; cheap when none is. Runs on every
    agent page view, the command, and at each worker's start and reaper tick (research/worker.py)."""
    changed = []
    for candidate in AgentRun.objects.filter(status=AgentRun.Status.RUNNING).only(
        "pk", "heartbeat_at", "started_at", "worker"
    ):
        if _lost(candidate) is None:
            continue
        try:
            with transaction.atomic():
                run = AgentRun.objects.select_for_update(skip_locked=True).filter(pk=candidate.pk).first()
                reason = _lost(run) if run is not None and run.status == AgentRun.Status.RUNNING else None
                if run is None or reason is None:
                    continue
                if _worker_lost(run, reason) == "retry":
                    run.status, run.worker, run.heartbeat_at, run.phase = (
                        AgentRun.Status.QUEUED,
                        {},
                        None,
                        "queued",
                    )
                    transaction.on_commit(_enqueue_later(run.pk))
                run.save()
                changed.append(run)
        except DatabaseError as exc:
            log.warning("agent run %s: could not be reaped now (%s)", candidate.pk, exc)
    return changed
