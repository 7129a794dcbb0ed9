from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Accounts on top of django-allauth: a guest's history follows them into their account, the profile
    page, API tokens, account deletion and the `grant` command. No models of its own."""

    name = "quizsite.accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (connects the sign-up / sign-in receivers)
