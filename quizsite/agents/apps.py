from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "quizsite.agents"
    default_auto_field = "django.db.models.BigAutoField"
