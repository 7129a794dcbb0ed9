"""The Celery app; tasks live in each app's tasks.py and only call services."""

import os

from celery import Celery

from quizsite.research.worker import install as install_fit_reaper

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings.local")

app = Celery("quizsite")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
install_fit_reaper(app)  # every worker reaps fits whose worker died (quizsite/research/worker.py)
