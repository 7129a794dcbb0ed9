from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "quizsite.agents"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from quizsite.items.importers import importer_register

        from . import tasks  # noqa: F401  (registers the tasks, which runs.py enqueues by name)
        from .importers import FORMATS

        # caimira and protobowl-log create agents, so their importers live here; `import_items --format`
        # finds them in the items registry (items never imports agents)
        for fmt, importer in FORMATS.items():
            importer_register(fmt, importer)
