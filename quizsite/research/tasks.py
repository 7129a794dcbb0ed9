"""Celery tasks of the research app; each only calls a service (or the fit engine). Nothing imports this
module but Celery itself and apps.ready (which registers the tasks): services enqueue by task name.

The fit task is acked late and rejected (so redelivered) when its pool process dies; that is safe because
`fit_run_execute` claims the run first and does nothing for a run that is finished or alive elsewhere.
"""

from celery import shared_task

from . import fits, services


@shared_task(name=services.FIT_TASK, bind=True, acks_late=True, reject_on_worker_lost=True)
def fit_run_task(self, fit_id: int) -> str:
    return fits.fit_run_execute(fit_id=fit_id, worker_name=self.request.hostname or "").status


@shared_task(name="research.reap_lost_fits", ignore_result=True)
def reap_lost_fits_task() -> list[int]:
    return [run.pk for run in services.fitrun_reap_lost()]


@shared_task(name="research.refit_if_due")
def refit_if_due_task() -> int | None:
    run = fits.fits_refit_if_due()
    return run.pk if run else None
