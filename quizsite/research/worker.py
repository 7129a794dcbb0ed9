"""What every Celery worker does for fit runs, whatever its pool and with or without `celery beat`.

- At start (`worker_ready`), it reaps: a fit whose worker died before this one started ends failed, or
  goes back to the queue if `RESEARCH_FIT_RETRY_ON_WORKER_LOSS` allows, and this worker then runs it.
- While it lives, its timer sends the reaper task every `RESEARCH_FIT_REAP_EVERY_SECONDS` (each message
  expires after one period, so busy workers do not pile them up); on by default on Redis, off on the
  filesystem broker (settings/base.py says why). Page views and API reads of fits reap too, so a dead
  worker's fit is reported even when no worker is left, and a redelivered fit task checks its run itself.

Installed on the Celery app by quizsite/celery.py. Nothing here touches the database at import time.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery, bootsteps, signals

log = logging.getLogger(__name__)
REAP_TASK = "research.reap_lost_fits"
AGENT_REAP_TASK = "agents.reap_lost_runs"  # agent runs use the same liveness rules (quizsite/agents/runs.py)


class FitReaperStep(bootsteps.StartStopStep):
    """Schedules the reaper task on the worker's own timer (the event loop's, or the timer thread)."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.tref: Any = None

    def start(self, parent: Any) -> None:
        from quizsite.core import liveness

        every = liveness.reap_every_s()
        if every <= 0:
            return
        if str(parent.app.conf.broker_url or "").startswith("filesystem:"):
            log.warning(
                "the fit reaper task on the filesystem broker: a message read before it is fully written "
                "stops this worker (RESEARCH_FIT_REAP_EVERY_SECONDS=0 avoids it)"
            )
        self.tref = parent.timer.call_repeatedly(every, self._send, (parent.app, every))

    def stop(self, parent: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None

    @staticmethod
    def _send(app: Celery, every: float) -> None:
        try:
            app.send_task(REAP_TASK, expires=every)
            app.send_task(AGENT_REAP_TASK, expires=every)
        except Exception as exc:  # the broker is away: the next tick tries again
            log.warning("could not schedule the fit reaper: %s", exc)


def reap_at_start(sender: Any = None, **kwargs: Any) -> None:
    from django.db import connections

    from quizsite.agents import runs as agent_runs

    from . import services

    try:
        for run in services.fitrun_reap_lost():
            log.warning("fit %s: worker lost before this worker started; now %s", run.pk, run.status)
        for agent_run in agent_runs.agentrun_reap_lost():
            log.warning(
                "agent run %s: worker lost before this worker started; now %s", agent_run.pk, agent_run.status
            )
    except Exception:
        log.exception("reaping lost fits at worker start failed")
    finally:
        connections.close_all()  # the pool's processes must not share this process's connection


def install(app: Celery) -> None:
    app.steps["worker"].add(FitReaperStep)
    signals.worker_ready.connect(reap_at_start, weak=False, dispatch_uid="research-reap-at-start")
