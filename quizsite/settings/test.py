"""Tests: fast hashing, quiet logs; the database still follows DATABASE_URL (SQLite by default)."""

from .base import *  # noqa: F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
CELERY_TASK_ALWAYS_EAGER = True
