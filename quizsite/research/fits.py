"""Fit runs: start (a Celery task), execute (prepare, embed, fit, store), cancel, activate, refit.

The execution order is what keeps the active fit safe: the run is prepared, embedded and fitted with
nothing written but its progress; only when `irt` has returned are the parameters, the artifact and the
`succeeded` status written, in one transaction, and only then may the run become the active one. A run
that fails or is cancelled records why and has no parameters.
"""

from __future__ import annotations

import logging
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

import irt

from .artifacts import artifact_pack
from .embedding import DEFAULT_EMBEDDER, cache_dir, encoder_for
from .models import FitAgent, FitItem, FitRun
from .prepare import DataSpec, Prepared, prepare, responses_selected

log = logging.getLogger(__name__)
MODELS = ("caimira", "1pl", "2pl", "mirt")
PROGRESS_EVERY_S = 0.5
STALE_AFTER_S = 600  # a running fit whose progress has not moved for this long has lost its worker


class FitCancelled(Exception):
    """Raised from the progress hook when a researcher cancelled the run."""


@dataclass
class FitSpec:
    """Everything a researcher chooses for one run; stored as the run's settings."""

    data: DataSpec = field(default_factory=DataSpec)
    model: str = "caimira"
    dims: int = 5
    embedder: str = DEFAULT_EMBEDDER
    template: str = irt.DEFAULT_TEMPLATE
    max_epochs: int | None = None
    lr: float = 0.005
    temperature: float = 1.0
    val_fraction: float = 0.1
    seed: int = 0
    n_clusters: int = 6

    def __post_init__(self) -> None:
        if isinstance(self.data, dict):
            self.data = DataSpec.from_dict(self.data)
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {', '.join(MODELS)}")
        if not 1 <= int(self.dims) <= 32:
            raise ValueError("dims must be between 1 and 32")
        if self.max_epochs is not None and int(self.max_epochs) < 1:
            raise ValueError("max_epochs must be positive")
        if not 0 <= float(self.val_fraction) < 1:
            raise ValueError("val_fraction must be in [0, 1)")
        encoder_for(self.embedder)  # a malformed hashing-<dim> name fails here, before the run is queued

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FitSpec:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def config(self) -> irt.FitConfig:
        return irt.FitConfig(
            model=self.model, dims=int(self.dims), lr=float(self.lr), temperature=float(self.temperature),
            max_epochs=self.max_epochs, val_fraction=float(self.val_fraction), seed=int(self.seed),
        )


# --- starting, cancelling, activating ------------------------------------------------------------------


def fit_run_create(*, spec: FitSpec, user=None, label: str = "", reason: str = "manual", activate: bool = True) -> FitRun:
    return FitRun.objects.create(
        settings=spec.as_dict(), created_by=user, label=label[:200], reason=reason, activate_on_success=activate,
        progress={"phase": "queued"},
    )


def fit_run_start(*, spec: FitSpec, user=None, label: str = "", reason: str = "manual", activate: bool = True) -> FitRun:
    """Create the run and enqueue its Celery task once the row is committed (the worker must see it)."""
    from .tasks import fit_run_task

    with transaction.atomic():
        run = fit_run_create(spec=spec, user=user, label=label, reason=reason, activate=activate)

        def enqueue() -> None:
            result = fit_run_task.delay(run.pk)
            FitRun.objects.filter(pk=run.pk, task_id="").update(task_id=result.id or "")

        transaction.on_commit(enqueue)
    return run


def fit_run_cancel(*, run: FitRun) -> FitRun:
    """A queued run is cancelled at once; a running one stops at its next epoch (or now, if its worker is gone)."""
    with transaction.atomic():
        run = FitRun.objects.select_for_update().get(pk=run.pk)
        if run.finished:
            return run
        updated = run.progress.get("updated")
        stale = updated is not None and time.time() - float(updated) > STALE_AFTER_S
        if run.status == FitRun.Status.QUEUED or stale:
            run.error = "cancelled before it started" if run.status == FitRun.Status.QUEUED else "cancelled (worker lost)"
            run.status, run.finished_at = FitRun.Status.CANCELLED, timezone.now()
            run.progress = {**run.progress, "phase": "cancelled"}
        run.cancel_requested = True
        run.save()
        return run


def fit_run_activate(*, run: FitRun) -> FitRun:
    """Make a succeeded run the active one (the one adaptive play and the default pages use)."""
    with transaction.atomic():
        run = FitRun.objects.select_for_update().get(pk=run.pk)
        if run.status != FitRun.Status.SUCCEEDED:
            raise ValueError("only a succeeded fit can be active")
        FitRun.objects.filter(is_active=True).exclude(pk=run.pk).update(is_active=False)
        run.is_active = True
        run.save(update_fields=["is_active"])
        return run


def fit_labels_update(*, run: FitRun, labels: list[str]) -> FitRun:
    """The researcher names the dimensions; names are free text, blank means the default 'dim k'."""
    run.dim_labels = [label.strip()[:60] for label in labels[: run.dims]]
    run.save(update_fields=["dim_labels"])
    return run


def fit_active() -> FitRun | None:
    return FitRun.objects.filter(is_active=True).defer("artifact").first()


# --- executing -----------------------------------------------------------------------------------------


def _progress_hook(run_id: int, max_epochs: int) -> Callable[[int, float, float | None], None]:
    last = 0.0

    def hook(epoch: int, train_loss: float, val_loss: float | None) -> None:
        nonlocal last
        now = time.time()
        if epoch != 1 and now - last < PROGRESS_EVERY_S:
            return
        last = now
        progress = {"phase": "fitting", "epoch": epoch, "max_epochs": max_epochs, "train_loss": train_loss,
                    "val_loss": val_loss, "updated": now}
        FitRun.objects.filter(pk=run_id).update(progress=progress)
        if FitRun.objects.filter(pk=run_id, cancel_requested=True).exists():
            raise FitCancelled()

    return hook


def _phase(run_id: int, phase: str, **extra: Any) -> None:
    FitRun.objects.filter(pk=run_id).update(progress={"phase": phase, "updated": time.time(), **extra})


def fit_run_execute(*, fit_id: int) -> FitRun:
    """Run a queued fit to the end. Called by the Celery task (and by `fit_caimira --wait`)."""
    with transaction.atomic():
        run = FitRun.objects.select_for_update().get(pk=fit_id)
        if run.status != FitRun.Status.QUEUED or run.cancel_requested:
            return run  # cancelled while queued, or delivered twice
        run.status, run.started_at = FitRun.Status.RUNNING, timezone.now()
        run.save(update_fields=["status", "started_at"])
    timing: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        spec = FitSpec.from_dict(run.settings)
        _phase(fit_id, "preparing")
        prepared = prepare(spec.data)
        FitRun.objects.filter(pk=fit_id).update(counts=prepared.counts)
        if not prepared.responses:
            raise ValueError("no judged responses match this data selection")
        # meta travels into the fit's own metrics, so a fit directory says which data selection made it
        data = irt.FitData.from_records(prepared.queries, prepared.agents, prepared.responses,
                                        meta={"fit_run": fit_id, "selection": spec.data.as_dict()})
        timing["prepare_s"] = round(time.perf_counter() - t0, 3)
        if spec.model == "caimira":
            t1 = time.perf_counter()
            _phase(fit_id, "embedding", items=len(prepared.queries))
            data = irt.with_embeddings(
                data, model=spec.embedder, template=spec.template, encoder=encoder_for(spec.embedder), cache=cache_dir()
            )
            timing["embed_s"] = round(time.perf_counter() - t1, 3)
        config = spec.config()
        t2 = time.perf_counter()
        result = irt.fit(data, config, progress=_progress_hook(fit_id, config.resolved().max_epochs or 0))
        timing["fit_s"] = round(time.perf_counter() - t2, 3)
        _phase(fit_id, "storing")
        run = _store(run_id=fit_id, spec=spec, prepared=prepared, result=result, timing=timing, t0=t0)
    except FitCancelled:
        run = _finish_unsuccessful(fit_id, FitRun.Status.CANCELLED, "cancelled by a researcher", timing)
    except Exception as exc:  # every failure is recorded on the run; the active fit stays as it was
        log.exception("fit %s failed", fit_id)
        detail = f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc(limit=8)}"
        run = _finish_unsuccessful(fit_id, FitRun.Status.FAILED, detail, timing)
    return run


def _finish_unsuccessful(fit_id: int, status: str, error: str, timing: dict[str, float]) -> FitRun:
    # A run whose parameters were already committed (activation failed afterwards) stays succeeded.
    FitRun.objects.filter(pk=fit_id).exclude(status=FitRun.Status.SUCCEEDED).update(
        status=status, error=error[:20000], finished_at=timezone.now(), timing=timing,
        progress={"phase": status, "updated": time.time()},
    )
    return FitRun.objects.get(pk=fit_id)


def _stats(prepared: Prepared) -> tuple[dict[str, tuple[int, float]], dict[str, tuple[int, float]]]:
    by_agent: dict[str, list[int]] = {}
    by_item: dict[str, list[int]] = {}
    for r in prepared.responses:
        by_agent.setdefault(r["agent_id"], []).append(r["ruling"])
        by_item.setdefault(r["query_id"], []).append(r["ruling"])

    def summary(d: dict[str, list[int]]) -> dict[str, tuple[int, float]]:
        return {k: (len(v), sum(v) / len(v)) for k, v in d.items()}

    return summary(by_agent), summary(by_item)


def _store(*, run_id: int, spec: FitSpec, prepared: Prepared, result: irt.FitResult, timing: dict[str, float], t0: float) -> FitRun:
    t3 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        fit_dir = irt.save_fit(result, Path(tmp) / "fit", agents=prepared.agents)
        blob = artifact_pack(fit_dir=fit_dir, queries=prepared.queries, agents=prepared.agents, responses=prepared.responses)
        item_records = {r["id"]: r for r in _read_jsonl(fit_dir / "items.jsonl")}
    skills = result.skills
    skills = skills[:, None] if skills.ndim == 1 else skills
    agent_stats, item_stats = _stats(prepared)
    agents_by_id = {a["id"]: a for a in prepared.agents}
    queries_by_id = {q["id"]: q for q in prepared.queries}

    labels = None
    clusters: list[dict[str, Any]] = []
    if result.item_ids and all(item_records[q]["relevance"] is not None for q in result.item_ids):
        rel = np.asarray([item_records[q]["relevance"] for q in result.item_ids])
        dif = np.asarray([item_records[q]["difficulty"] for q in result.item_ids])
        found = irt.cluster_items(rel, dif, n_clusters=int(spec.n_clusters), seed=int(spec.seed))
        labels, clusters = found.labels, found.as_records()

    fit_agents = []
    for i, key in enumerate(result.agent_ids):
        rec = agents_by_id[key]
        n, acc = agent_stats.get(key, (0, None))
        fit_agents.append(
            FitAgent(fit_id=run_id, key=key, agent_id=rec.get("agent_pk"), kind=rec["type"], name=str(rec.get("name", key))[:200],
                     skill=[float(x) for x in skills[i]], n_responses=n, accuracy=acc, members=list(rec.get("members") or []))
        )
    fit_items = []
    for j, key in enumerate(result.item_ids):
        rec, query = item_records[key], queries_by_id[key]
        n, acc = item_stats.get(key, (0, None))
        fit_items.append(
            FitItem(fit_id=run_id, key=key, item_id=query.get("item_pk"), clue=query.get("clue"),
                    relevance=rec["relevance"] or [], difficulty=rec["difficulty"], effective_difficulty=rec["effective_difficulty"],
                    effective_total=float(sum(rec["effective_difficulty"])), n_responses=n, accuracy=acc,
                    cluster=None if labels is None else int(labels[j]))
        )
    with transaction.atomic():
        run = FitRun.objects.select_for_update().get(pk=run_id)
        if run.cancel_requested:
            raise FitCancelled()
        FitAgent.objects.bulk_create(fit_agents, batch_size=1000)
        FitItem.objects.bulk_create(fit_items, batch_size=1000)
        timing["store_s"] = round(time.perf_counter() - t3, 3)
        timing["total_s"] = round(time.perf_counter() - t0, 3)
        run.metrics, run.history, run.clusters, run.artifact = result.metrics, result.history, clusters, blob
        run.timing, run.status, run.finished_at = timing, FitRun.Status.SUCCEEDED, timezone.now()
        run.progress = {**run.progress, "phase": "succeeded", "updated": time.time()}
        run.save()
    if run.activate_on_success:
        # After the success commit: two runs finishing at once may race for the one active slot (a unique
        # constraint); the loser retries, so the later run ends active and neither is marked failed.
        for attempt in range(3):
            try:
                run = fit_run_activate(run=run)
                break
            except IntegrityError:
                if attempt == 2:
                    log.warning("fit %s succeeded but could not be made active", run.pk)
    return run


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    import json

    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --- periodic refit ------------------------------------------------------------------------------------


def fits_refit_if_due() -> FitRun | None:
    """Start a refit with the active fit's settings once enough new responses have arrived.

    Off unless `RESEARCH_REFIT_MIN_NEW_RESPONSES` > 0; never while another fit is queued or running.
    """
    threshold = int(getattr(settings, "RESEARCH_REFIT_MIN_NEW_RESPONSES", 0))
    active = fit_active()
    if threshold <= 0 or active is None:
        return None
    if FitRun.objects.filter(status__in=[FitRun.Status.QUEUED, FitRun.Status.RUNNING]).exists():
        return None
    spec = FitSpec.from_dict(active.settings)
    since_id = int(active.counts.get("max_response_id") or 0)
    if responses_selected(spec.data).filter(pk__gt=since_id).count() < threshold:
        return None
    return fit_run_start(spec=spec, label=f"periodic refit of fit {active.pk}", reason="periodic")
