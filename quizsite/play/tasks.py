"""Celery tasks of the play app; each only calls a service. Registered by apps.ready; enqueued by name."""

from typing import Any

from celery import shared_task
from celery.signals import worker_shutting_down

from . import bots


@shared_task(name=bots.BOT_TASK, ignore_result=True)
def bot_run_task(room: str, name: str) -> str:
    """One bot in one room, until it is removed, refused or the room has no person online for a while."""
    return bots.bot_run(room=room, name=name)


@worker_shutting_down.connect
def _bots_leave(**kwargs: Any) -> None:
    """A worker that shuts down ends its bot tasks first (bots run in its threads: `--pool=threads`)."""
    bots.bots_stop_all(reason="the worker is shutting down")
