"""Celery tasks of the research app; each only calls a service."""

from celery import shared_task

from . import fits


@shared_task(name="research.fit_run")
def fit_run_task(fit_id: int) -> str:
    return fits.fit_run_execute(fit_id=fit_id).status


@shared_task(name="research.refit_if_due")
def refit_if_due_task() -> int | None:
    run = fits.fits_refit_if_due()
    return run.pk if run else None
