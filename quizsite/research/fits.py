"""The fit engine: a run's spec, its execution (prepare, embed, fit, build the parameter rows), the refit check.

The execution order is what keeps the active fit safe: the run is prepared, embedded and fitted with
nothing written but its progress; only when `irt` has returned are the parameters, the artifact and the
`succeeded` status written, in one transaction, and only then may the run become the active one. A run
that fails or is cancelled records why and has no parameters.

Every write goes through services.py, and every write of the executing process is conditional on it still
owning the run; a heartbeat thread keeps the run's `heartbeat_at` fresh between progress steps, so the
reaper can tell a live fit from one whose worker died (see services.fitrun_reap_lost). Nothing here
imports the Celery tasks: tasks.py imports this module and services, never the reverse.
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connections

import irt
from quizsite.core import liveness

from . import services
from .artifacts import artifact_pack
from .embedding import DEFAULT_EMBEDDER, cache_dir, encoder_for
from .models import FitAgent, FitItem, FitRun
from .prepare import DataSpec, Prepared, fit_data_shortfall, prepare, responses_selected
from .selectors import fit_active
from .services import FitCancelled, FitLost

log = logging.getLogger(__name__)
MODELS = ("caimira", "1pl", "2pl", "mirt")
PROGRESS_EVERY_S = 0.5
__all__ = ["MODELS", "FitCancelled", "FitLost", "FitSpec", "fit_run_execute", "fits_refit_if_due"]


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


# --- executing -----------------------------------------------------------------------------------------


class _Heartbeat:
    """A daemon thread that writes the run's heartbeat whenever the fit itself has not for `every` seconds.

    Used as a context manager around the execution; on exit it stops and is joined (it never outlives the
    fit by more than one database call). If a beat finds that this attempt no longer owns the run, it sets
    `lost` and ends; the fit's next progress step then stops the fit without writing.
    """

    def __init__(self, fit_id: int, attempt: int, every: float) -> None:
        self.fit_id, self.attempt, self.every = fit_id, attempt, every
        self.last = time.monotonic()
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"fit-{fit_id}-heartbeat", daemon=True)

    def beat(self) -> None:
        """The fit wrote a heartbeat itself (a progress step)."""
        self.last = time.monotonic()

    def _loop(self) -> None:
        try:
            while not self._stop.wait(max(0.05, self.every - (time.monotonic() - self.last))):
                if time.monotonic() - self.last < self.every:
                    continue
                try:
                    owned = services.fitrun_heartbeat(fit_id=self.fit_id, attempt=self.attempt).owned
                except Exception as exc:  # a locked or unreachable database: try again at the next beat
                    log.info("fit %s: heartbeat not written (%s)", self.fit_id, exc)
                    continue
                self.last = time.monotonic()
                if not owned:
                    self.lost.set()
                    return
        finally:
            connections.close_all()  # this thread's own connections

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=60)


class _Attempt:
    """The executing process's handle on its claim: progress writes that double as heartbeats."""

    def __init__(self, run: FitRun, heartbeat: _Heartbeat) -> None:
        self.fit_id, self.attempt, self.heartbeat = run.pk, run.attempts, heartbeat
        self.carry = {"lost": run.progress["lost"]} if run.progress.get("lost") else {}
        self.last_write = 0.0

    def write(self, progress: dict[str, Any]) -> None:
        """Raises FitLost if this attempt no longer owns the run, FitCancelled if a researcher cancelled it."""
        if self.heartbeat.lost.is_set():
            raise FitLost()
        beat = services.fitrun_heartbeat(fit_id=self.fit_id, attempt=self.attempt, check_cancel=True,
                                         progress={**progress, **self.carry, "updated": time.time()})
        self.heartbeat.beat()
        if not beat.owned:
            raise FitLost()
        if beat.cancel:
            raise FitCancelled()

    def phase(self, phase: str, **extra: Any) -> None:
        self.write({"phase": phase, **extra})

    def _throttled(self, first: bool) -> bool:
        """True when this step should not write (the last write is under PROGRESS_EVERY_S old)."""
        now = time.time()
        if not first and now - self.last_write < PROGRESS_EVERY_S:
            if self.heartbeat.lost.is_set():
                raise FitLost()
            return True
        self.last_write = now
        return False

    def embedding_hook(self) -> Callable[[int, int], None]:
        """Progress of the embedding phase: items embedded (or found in the cache) of all items."""

        def hook(done: int, total: int) -> None:
            if self._throttled(done == 0 or done == total):
                return
            self.write({"phase": "embedding", "items": total, "items_done": done})

        return hook

    def epoch_hook(self) -> Callable[[irt.EpochStatus], None]:
        """Progress of training: where early stopping stands (best epoch, patience left, losses).

        The fit stops when `patience_left` reaches 0, usually long before `max_epochs`, so the page shows
        this state rather than a bar against the epoch cap."""

        def hook(st: irt.EpochStatus) -> None:
            if self._throttled(st.epoch == 1):  # each start of a multi-start fit counts its epochs from 1
                return
            self.write({"phase": "fitting", "epoch": st.epoch, "max_epochs": st.max_epochs, "train_loss": st.train_loss,
                        "val_loss": st.val_loss, "best_epoch": st.best_epoch, "best_loss": st.best_loss,
                        "monitored": st.monitored, "patience": st.patience, "patience_left": st.patience_left,
                        "start": st.start + 1, "starts": st.starts})

        return hook


def fit_run_execute(*, fit_id: int, worker_name: str = "") -> FitRun:
    """Run a queued fit to the end. Called by the Celery task (and by `fit_caimira --wait`).

    Any number of calls for one run is safe (a redelivered task): only the call that claims the run works.
    `worker_name` is the Celery worker's node name, recorded with this process's host and PID.
    """
    run = services.fitrun_claim(fit_id=fit_id, worker=liveness.identity(worker_name))
    if run is None:  # finished, cancelled, or running in a live process: a duplicate delivery
        run = FitRun.objects.defer("artifact").get(pk=fit_id)
        log.info("fit %s: nothing to do for this delivery (it is %s)", fit_id, run.status)
        return run
    timing: dict[str, float] = {}
    with _Heartbeat(run.pk, run.attempts, liveness.heartbeat_s()) as heartbeat:
        attempt = _Attempt(run, heartbeat)
        try:
            return _execute(run, attempt, timing)
        except FitLost:
            log.warning("fit %s: attempt %s no longer owns the run (reaped or cancelled); stopped, wrote nothing",
                        fit_id, attempt.attempt)
            return FitRun.objects.defer("artifact").get(pk=fit_id)
        except FitCancelled:
            return services.fitrun_finish_unsuccessful(fit_id=fit_id, attempt=attempt.attempt, status=FitRun.Status.CANCELLED,
                                                       error="cancelled by a researcher", timing=timing)
        except Exception as exc:  # every failure is recorded on the run; the active fit stays as it was
            log.exception("fit %s failed", fit_id)
            detail = f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc(limit=8)}"
            return services.fitrun_finish_unsuccessful(fit_id=fit_id, attempt=attempt.attempt, status=FitRun.Status.FAILED,
                                                       error=detail, timing=timing)


def fit_threads() -> int | None:
    """torch threads for a fit (`RESEARCH_FIT_THREADS`; None: torch's default)."""
    n = int(getattr(settings, "RESEARCH_FIT_THREADS", 1) or 0)
    return n if n > 0 else None


@contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    """Run the embedding and the fit with `n` torch threads, then restore the process's setting."""
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _execute(run: FitRun, attempt: _Attempt, timing: dict[str, float]) -> FitRun:
    with _torch_threads(fit_threads()):
        return _execute_here(run, attempt, timing)


def _execute_here(run: FitRun, attempt: _Attempt, timing: dict[str, float]) -> FitRun:
    fit_id = run.pk
    t0 = time.perf_counter()
    spec = FitSpec.from_dict(run.settings)
    attempt.phase("preparing")
    prepared = prepare(spec.data)
    services.fitrun_counts_set(fit_id=fit_id, attempt=attempt.attempt, counts=prepared.counts)
    # Checked again on the prepared data (no judged responses at all included): the form's check may
    # predate new or deleted rows, a periodic refit has none, and a large selection is only partly checked
    # before it is queued (selectors).
    shortfall = fit_data_shortfall(counts=prepared.counts)
    if shortfall:
        raise ValueError(shortfall)
    # meta travels into the fit's own metrics, so a fit directory says which data selection and which
    # grouping of humans (scheme, sizes, groups made, players left out) made it
    data = irt.FitData.from_records(prepared.queries, prepared.agents, prepared.responses,
                                    meta={"fit_run": fit_id, "selection": spec.data.as_dict(), "human_grouping": prepared.grouping})
    timing["prepare_s"] = round(time.perf_counter() - t0, 3)
    if spec.model == "caimira":
        t1 = time.perf_counter()
        attempt.phase("embedding", items=len(prepared.queries), items_done=0)
        data = irt.with_embeddings(
            data, model=spec.embedder, template=spec.template, encoder=encoder_for(spec.embedder), cache=cache_dir(),
            progress=attempt.embedding_hook(),
        )
        timing["embed_s"] = round(time.perf_counter() - t1, 3)
    config = replace(spec.config(), threads=fit_threads())  # recorded with the fit's config
    t2 = time.perf_counter()
    result = irt.fit(data, config, on_epoch=attempt.epoch_hook())
    timing["fit_s"] = round(time.perf_counter() - t2, 3)
    attempt.phase("storing")
    return _store(fit_id=fit_id, attempt=attempt.attempt, spec=spec, prepared=prepared, result=result, timing=timing, t0=t0)


def _stats(prepared: Prepared) -> tuple[dict[str, tuple[int, float]], dict[str, tuple[int, float]]]:
    by_agent: dict[str, list[int]] = {}
    by_item: dict[str, list[int]] = {}
    for r in prepared.responses:
        by_agent.setdefault(r["agent_id"], []).append(r["ruling"])
        by_item.setdefault(r["query_id"], []).append(r["ruling"])

    def summary(d: dict[str, list[int]]) -> dict[str, tuple[int, float]]:
        return {k: (len(v), sum(v) / len(v)) for k, v in d.items()}

    return summary(by_agent), summary(by_item)


def _store(*, fit_id: int, attempt: int, spec: FitSpec, prepared: Prepared, result: irt.FitResult, timing: dict[str, float], t0: float) -> FitRun:
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
            FitAgent(fit_id=fit_id, key=key, agent_id=rec.get("agent_pk"), kind=rec["type"], name=str(rec.get("name", key))[:200],
                     skill=[float(x) for x in skills[i]], n_responses=n, accuracy=acc, members=list(rec.get("members") or []))
        )
    fit_items = []
    for j, key in enumerate(result.item_ids):
        rec, query = item_records[key], queries_by_id[key]
        n, acc = item_stats.get(key, (0, None))
        fit_items.append(
            FitItem(fit_id=fit_id, key=key, item_id=query.get("item_pk"), clue=query.get("clue"),
                    relevance=rec["relevance"] or [], difficulty=rec["difficulty"], effective_difficulty=rec["effective_difficulty"],
                    effective_total=float(sum(rec["effective_difficulty"])), n_responses=n, accuracy=acc,
                    cluster=None if labels is None else int(labels[j]))
        )
    return services.fitrun_succeed(fit_id=fit_id, attempt=attempt, agents=fit_agents, items=fit_items, metrics=result.metrics,
                                   history=result.history, clusters=clusters, artifact=blob, timing=timing, t0=t0, t_store=t3)


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
    services.fitrun_reap_lost()  # a fit whose worker died must not hold refits back
    if FitRun.objects.filter(status__in=[FitRun.Status.QUEUED, FitRun.Status.RUNNING]).exists():
        return None
    spec = FitSpec.from_dict(active.settings)
    since_id = int(active.counts.get("max_response_id") or 0)
    if responses_selected(spec.data).filter(pk__gt=since_id).count() < threshold:
        return None
    return services.fitrun_start(spec=spec, label=f"periodic refit of fit {active.pk}", reason="periodic")
