"""Celery tasks of the agents app; each only calls a service. Acked late and rejected (so redelivered)
when the pool process dies: safe, because agentrun_execute claims the run first and answers only what
has no answer yet."""

from celery import shared_task

from . import runner, runs


@shared_task(name=runs.AGENT_TASK, bind=True, acks_late=True, reject_on_worker_lost=True)
def agent_run_task(self, run_id: int) -> str:
    return runner.agentrun_execute(run_id=run_id, worker_name=self.request.hostname or "").status


@shared_task(name="agents.reap_lost_runs", ignore_result=True)
def reap_lost_runs_task() -> list[int]:
    return [run.pk for run in runs.agentrun_reap_lost()]
