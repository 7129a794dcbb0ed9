from django.apps import AppConfig


class AnnotateConfig(AppConfig):
    name = "quizsite.annotate"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The demo loader (items) knows nothing of campaigns; annotate adds its step to it.
        from quizsite.items import demo

        from .demo import demo_campaigns_ensure

        if demo_campaigns_ensure not in demo.DEMO_HOOKS:
            demo.DEMO_HOOKS.append(demo_campaigns_ensure)
