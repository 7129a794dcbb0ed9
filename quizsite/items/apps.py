from django.apps import AppConfig


class ItemsConfig(AppConfig):
    name = "quizsite.items"
    default_auto_field = "django.db.models.BigAutoField"
