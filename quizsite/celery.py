"""The Celery app; tasks live in each app's tasks.py and only call services."""

import os
from typing import Any

from celery import Celery

from quizsite.research.worker import install as install_fit_reaper
from quizsite.startup import settings_load_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings.local")

app = Celery("quizsite")


@app.on_configure.connect
def _settings_load_or_exit(**_: Any) -> None:
    """Sent just before Celery reads its configuration from Django's settings (lazily, when a worker or beat
    first needs it, well after this module is imported: settings/production.py imports this package), so
    a refused configuration is one line here too, not a traceback through Celery's command line."""
    settings_load_or_exit()


app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
install_fit_reaper(app)  # every worker reaps fits whose worker died (quizsite/research/worker.py)
