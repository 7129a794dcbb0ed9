from django.apps import AppConfig


class PlayConfig(AppConfig):
    name = "quizsite.play"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import tasks  # noqa: F401  (registers the bot task, which play/bots.py enqueues by name)
