from django.apps import AppConfig


class ResearchConfig(AppConfig):
    name = "quizsite.research"
    label = "research"
    verbose_name = "Research: fits, results, exports"

    def ready(self) -> None:
        # The optional periodic refit is registered here, in the app that owns it, so that the shared
        # settings need no beat schedule; `celery beat` picks it up from the configured Celery app.
        from django.conf import settings

        from quizsite.celery import app
        from quizsite.play.picking import Chooser, chooser_register

        from . import tasks  # noqa: F401  (registers the tasks, which services enqueue by name)
        from .adaptive import adaptive_meta, adaptive_pick_for_room

        # a room with `adaptive` on asks this app for its next tossup (play never imports research)
        chooser_register(Chooser(pick=adaptive_pick_for_room, meta=adaptive_meta))

        every = getattr(settings, "RESEARCH_REFIT_CHECK_SECONDS", 3600)
        if getattr(settings, "RESEARCH_REFIT_MIN_NEW_RESPONSES", 0) > 0:
            app.conf.beat_schedule = {
                **(app.conf.beat_schedule or {}),
                "research-refit-if-due": {"task": "research.refit_if_due", "schedule": float(every)},
            }
