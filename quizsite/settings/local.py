"""Developer machine: the embedded default (SQLite, in-memory channels, filesystem Celery broker)."""

from .base import *  # noqa: F403
from .base import env_bool

DEBUG = env_bool("DEBUG", True)
