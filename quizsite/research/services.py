"""Writes of the research app: fit runs (their whole life, from queued to finished), ruling reports, overrides.

Fit runs. `fits.py` is the engine (prepare, embed, fit, build the parameter rows); every write to a run is
here, and the Celery tasks call only these and the engine. Each write of a running fit's process is
conditional on that process still owning the run (status running, same attempt): a run that was reaped,
cancelled or handed to another attempt is never written by the old one again. The reaper
(`fitrun_reap_lost`) runs on every fit page view and API read, at each worker's start, and as a task each
live worker schedules; a run whose worker is lost ends failed, or goes back to the queue when
`RESEARCH_FIT_RETRY_ON_WORKER_LOSS` allows. Only a running row is ever reaped, so a run whose results
are committed (succeeded) is never marked failed, and the active fit is never touched.

Rulings. A researcher's ruling never rewrites the original response: it is a ResponseOverride row beside
it (who, when, new verdict), and exports carry both. The fit's data preparation uses the latest override.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from celery import current_app
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from quizsite.core import liveness
from quizsite.items.models import Response, ResponseOverride, RulingReport

from .models import FitAgent, FitItem, FitRun
from .prepare import fit_data_shortfall

if TYPE_CHECKING:
    from .fits import FitSpec

log = logging.getLogger(__name__)
FIT_TASK = "research.fit_run"  # the Celery task that executes a run (tasks.py), enqueued by name: no import cycle

VERDICT_CORRECT: dict[str, bool | None] = {Response.Verdict.ACCEPT: True, Response.Verdict.REJECT: False, Response.Verdict.PROMPT: None}


def response_override(*, response: Response, by, verdict: str, note: str = "") -> ResponseOverride:
    """Record a new verdict for a response (accept or reject; the original row stays as it was)."""
    if verdict not in (Response.Verdict.ACCEPT, Response.Verdict.REJECT):
        raise ValueError("an override is accept or reject")
    return ResponseOverride.objects.create(
        response=response, by=by, verdict=verdict, correct=VERDICT_CORRECT[verdict], note=note[:500]
    )


def report_resolve(*, report: RulingReport, by, overrule: bool, verdict: str = Response.Verdict.ACCEPT, note: str = "") -> RulingReport:
    """Answer a player's report: uphold the ruling, or overrule it with a new verdict.

    Every open report on the same response gets the same answer (several players may report one ruling).
    """
    with transaction.atomic():
        report = RulingReport.objects.select_for_update().select_related("response").get(pk=report.pk)
        if report.status != RulingReport.Status.OPEN:
            raise ValueError("this report was already resolved")
        status = RulingReport.Status.OVERRULED if overrule else RulingReport.Status.UPHELD
        if overrule:
            response_override(response=report.response, by=by, verdict=verdict, note=note or report.comment)
        RulingReport.objects.filter(response=report.response, status=RulingReport.Status.OPEN).update(status=status)
        report.refresh_from_db()
        return report


# --- fit runs: starting, cancelling, activating ---------------------------------------------------------


class FitCancelled(Exception):
    """A researcher cancelled the run: raised in the running process at its next progress step."""


class FitLost(Exception):
    """This process no longer owns the run (reaped, cancelled at once, or claimed by a later attempt)."""


def fitrun_create(*, spec: FitSpec, user=None, label: str = "", reason: str = "manual", activate: bool = True) -> FitRun:
    return FitRun.objects.create(
        settings=spec.as_dict(), created_by=user, label=label[:200], reason=reason, activate_on_success=activate,
        progress={"phase": "queued"},
    )


def _enqueue(fit_id: int) -> None:
    result = current_app.tasks[FIT_TASK].delay(fit_id)
    FitRun.objects.filter(pk=fit_id).update(task_id=result.id or "")


def fitrun_start(*, spec: FitSpec, user=None, label: str = "", reason: str = "manual", activate: bool = True) -> FitRun:
    """Create the run and enqueue its Celery task once the row is committed (the worker must see it)."""
    with transaction.atomic():
        run = fitrun_create(spec=spec, user=user, label=label, reason=reason, activate=activate)
        transaction.on_commit(lambda: _enqueue(run.pk))
    return run


def _lost(run: FitRun) -> str | None:
    return liveness.lost_reason(heartbeat_at=run.heartbeat_at or run.started_at, worker=run.worker or {},
                                now=timezone.now(), bound=liveness.lost_after_s())


def _end(run: FitRun, status: str, error: str) -> None:
    run.status, run.error, run.finished_at = status, error[:20000], timezone.now()
    run.progress = {**run.progress, "phase": status, "updated": time.time()}


def fitrun_cancel(*, run: FitRun) -> FitRun:
    """A queued run, or a running one whose worker is lost, is cancelled at once; a running one whose worker
    lives stops at its next progress step (the worker writes the cancelled status)."""
    with transaction.atomic():
        run = FitRun.objects.select_for_update().get(pk=run.pk)
        if run.finished:
            return run
        run.cancel_requested = True
        if run.status == FitRun.Status.QUEUED:
            _end(run, FitRun.Status.CANCELLED, "cancelled before it started")
        elif (reason := _lost(run)) is not None:
            _end(run, FitRun.Status.CANCELLED, f"cancelled ({reason})")
        run.save()
        return run


def fitrun_activate(*, run: FitRun) -> FitRun:
    """Make a succeeded run the active one (the one adaptive play and the default pages use).

    A run of too little data (`prepare.fit_data_shortfall` on its counts) is refused: a run no longer
    gets that far, but one that succeeded before the minimum existed keeps its results and stays inactive.
    """
    with transaction.atomic():
        run = FitRun.objects.select_for_update().get(pk=run.pk)
        if run.status != FitRun.Status.SUCCEEDED:
            raise ValueError("only a succeeded fit can be active")
        shortfall = fit_data_shortfall(counts=run.counts or {})
        if shortfall:
            raise ValueError(shortfall)
        FitRun.objects.filter(is_active=True).exclude(pk=run.pk).update(is_active=False)
        run.is_active = True
        run.save(update_fields=["is_active"])
        return run


def fitrun_labels_update(*, run: FitRun, labels: list[str]) -> FitRun:
    """The researcher names the dimensions; names are free text, blank means the default 'dim k'."""
    run.dim_labels = [label.strip()[:60] for label in labels[: run.dims]]
    run.save(update_fields=["dim_labels"])
    return run


# --- fit runs: the executing process -------------------------------------------------------------------


def _worker_lost(run: FitRun, reason: str) -> str:
    """Apply the worker-loss policy to a locked running row (not saved): 'cancelled', 'failed' or 'retry'."""
    if run.cancel_requested:
        _end(run, FitRun.Status.CANCELLED, f"cancelled ({reason})")
        return "cancelled"
    allowed = liveness.retries_allowed()
    attempt = max(run.attempts, 1)  # 0: claimed before attempts were counted (a worker on older code)
    if attempt <= allowed:  # attempt k lost: k - 1 retries used so far, so one more is allowed
        log.warning("fit %s: %s; queued again (retry %s of %s)", run.pk, reason, attempt, allowed)
        return "retry"
    tried = f" (attempt {attempt} of {allowed + 1})" if allowed else ""
    log.warning("fit %s failed: %s%s", run.pk, reason, tried)
    _end(run, FitRun.Status.FAILED, reason + tried)
    return "failed"


def fitrun_claim(*, fit_id: int, worker: dict[str, Any]) -> FitRun | None:
    """The executing process takes the run: returns it running (attempt n) or None if there is nothing to do.

    Safe against any number of deliveries of the task: a finished run, or a running one whose worker is
    alive, is left alone. A delivery of a run that is running but whose worker is lost (the message came
    back after its worker died) applies the worker-loss policy: this process retries it, or it fails.
    """
    with transaction.atomic():
        run = FitRun.objects.select_for_update().filter(pk=fit_id).first()
        if run is None:
            return None
        lost_note: str | None = None
        if run.status == FitRun.Status.QUEUED:
            if run.cancel_requested:
                _end(run, FitRun.Status.CANCELLED, run.error or "cancelled before it started")
                run.save()
                return None
            lost_note = run.progress.get("lost")
        elif run.status == FitRun.Status.RUNNING and (reason := _lost(run)) is not None:
            if _worker_lost(run, reason) != "retry":
                run.save()
                return None
            lost_note = reason
        else:
            return None  # finished, or running in a live process: a duplicate delivery
        run.status, run.attempts, run.worker = FitRun.Status.RUNNING, run.attempts + 1, worker
        run.started_at = run.started_at or timezone.now()
        run.heartbeat_at, run.error = timezone.now(), ""
        run.progress = {"phase": "starting", "updated": time.time(), **({"lost": lost_note} if lost_note else {})}
        run.save()
        return run


@dataclass(frozen=True)
class Beat:
    owned: bool  # False: stop, write nothing more
    cancel: bool = False  # a researcher asked to stop


def fitrun_heartbeat(*, fit_id: int, attempt: int, progress: dict[str, Any] | None = None, check_cancel: bool = False) -> Beat:
    """Record that attempt `attempt` of the run is alive (and its progress, if given)."""
    fields: dict[str, Any] = {"heartbeat_at": timezone.now()}
    if progress is not None:
        fields["progress"] = progress
    if not FitRun.objects.filter(pk=fit_id, status=FitRun.Status.RUNNING, attempts=attempt).update(**fields):
        return Beat(owned=False)
    return Beat(owned=True, cancel=check_cancel and FitRun.objects.filter(pk=fit_id, cancel_requested=True).exists())


def fitrun_counts_set(*, fit_id: int, attempt: int, counts: dict[str, Any]) -> None:
    if not FitRun.objects.filter(pk=fit_id, status=FitRun.Status.RUNNING, attempts=attempt).update(counts=counts):
        raise FitLost()


def fitrun_finish_unsuccessful(*, fit_id: int, attempt: int, status: str, error: str, timing: dict[str, float]) -> FitRun:
    """Attempt `attempt` ends failed or cancelled (its error says why); nothing if it no longer owns the run."""
    FitRun.objects.filter(pk=fit_id, status=FitRun.Status.RUNNING, attempts=attempt).update(
        status=status, error=error[:20000], finished_at=timezone.now(), timing=timing,
        progress={"phase": status, "updated": time.time()},
    )
    return FitRun.objects.defer("artifact").get(pk=fit_id)


def fitrun_succeed(*, fit_id: int, attempt: int, agents: list[FitAgent], items: list[FitItem], metrics: dict[str, Any],
                   history: list[Any], clusters: list[dict[str, Any]], artifact: bytes, timing: dict[str, float],
                   t0: float, t_store: float) -> FitRun:
    """Write the parameters and the succeeded status in one transaction, then make the run active if asked.

    Raises FitCancelled or FitLost (and writes nothing) when a researcher cancelled the run or this
    attempt no longer owns it. `t0` and `t_store` are perf_counter() values: when the run and its store began.
    """
    with transaction.atomic():
        run = FitRun.objects.select_for_update().get(pk=fit_id)
        if run.status != FitRun.Status.RUNNING or run.attempts != attempt:
            raise FitLost()
        if run.cancel_requested:
            raise FitCancelled()
        FitAgent.objects.bulk_create(agents, batch_size=1000)
        FitItem.objects.bulk_create(items, batch_size=1000)
        timing["store_s"] = round(time.perf_counter() - t_store, 3)
        timing["total_s"] = round(time.perf_counter() - t0, 3)
        run.metrics, run.history, run.clusters, run.artifact = metrics, history, clusters, artifact
        run.timing, run.status, run.finished_at = timing, FitRun.Status.SUCCEEDED, timezone.now()
        run.heartbeat_at = timezone.now()
        run.progress = {**run.progress, "phase": "succeeded", "updated": time.time()}
        run.save()
    if run.activate_on_success:
        # After the success commit: two runs finishing at once may race for the one active slot (a unique
        # constraint); the loser retries, so the later run ends active and neither is marked failed.
        for attempt_no in range(3):
            try:
                run = fitrun_activate(run=run)
                break
            except IntegrityError:
                if attempt_no == 2:
                    log.warning("fit %s succeeded but could not be made active", run.pk)
            except ValueError as exc:  # too little data: the engine refuses such a run before it gets here
                log.warning("fit %s succeeded but is not made active: %s", run.pk, exc)
                break
    return run


# --- fit runs: the reaper ------------------------------------------------------------------------------


def fitrun_reap_lost() -> list[FitRun]:
    """End (or queue again) every running fit whose worker is lost; returns the runs it changed.

    Cheap when nothing is lost (one indexed read of the running rows), so it runs on every fit page view.
    """
    running = FitRun.objects.filter(status=FitRun.Status.RUNNING).only("pk", "heartbeat_at", "started_at", "worker")
    changed = []
    for candidate in running:
        if _lost(candidate) is None:
            continue
        try:
            run = _reap(candidate.pk)
        except DatabaseError as exc:  # e.g. SQLite still locked by a fit storing its results: next read tries again
            log.warning("fit %s: could not be reaped now (%s)", candidate.pk, exc)
            continue
        if run is not None:
            changed.append(run)
    return changed


def _reap(fit_id: int) -> FitRun | None:
    with transaction.atomic():
        # A row locked by another transaction is being written by its live fit (storing results): skip it.
        run = FitRun.objects.select_for_update(skip_locked=True).filter(pk=fit_id).first()
        reason = _lost(run) if run is not None and run.status == FitRun.Status.RUNNING else None
        if run is None or reason is None:
            return None  # finished, or beat, in the meantime
        if _worker_lost(run, reason) == "retry":
            run.status, run.worker, run.heartbeat_at = FitRun.Status.QUEUED, {}, None
            run.progress = {"phase": "queued", "updated": time.time(), "lost": reason}
            transaction.on_commit(lambda: _enqueue(fit_id))
        run.save()
        return run
