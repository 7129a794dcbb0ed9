"""Tests: fast hashing, quiet logs; the database still follows DATABASE_URL (SQLite by default)."""

from .base import *  # noqa: F403

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LOGGING = {"version": 1, "disable_existing_loggers": False, "root": {"level": "WARNING"}}
CELERY_TASK_ALWAYS_EAGER = True
PLAY_BOT_LAUNCHER = os.environ.get("PLAY_BOT_LAUNCHER", "off")  # an eager Celery bot would block its caller  # noqa: F405
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405  (test databases are dropped while the suite runs)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    # A file, not shared-cache memory: the play hub writes leases from a thread of its own, and SQLite's
    # shared cache refuses a second writer at once instead of waiting for it.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}  # noqa: F405
