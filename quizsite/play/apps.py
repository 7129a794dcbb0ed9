from django.apps import AppConfig


class PlayConfig(AppConfig):
    name = "quizsite.play"
    default_auto_field = "django.db.models.BigAutoField"
