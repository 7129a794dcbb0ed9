"""Celery tasks of the play app; each only calls a service. Registered by apps.ready; enqueued by name."""

from celery import shared_task

from . import bots


@shared_task(name=bots.BOT_TASK, ignore_result=True)
def bot_run_task(room: str, name: str) -> str:
    """One bot in one room, until it is removed, refused or the room has no person online for a while."""
    return bots.bot_run(room=room, name=name)
