from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "quizsite.agents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import tasks  # noqa: F401  (registers the tasks, which runs.py enqueues by name)
