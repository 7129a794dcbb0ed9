"""Loading the settings at a process's start, for every entry point: manage.py, the ASGI and WSGI modules and
the Celery app.

Production settings refuse a bad configuration by raising ImproperlyConfigured while they are imported
(settings/production.py). Left alone, that surfaces as a traceback of some 90 lines through Django's,
uvicorn's or Celery's loading code, with the one line that says what to fix at the bottom; each entry
point calls `settings_load_or_exit` first, so every process says it the same way, as one line on stderr,
and exits non-zero.
"""

from __future__ import annotations

import sys


def settings_load_or_exit() -> None:
    """Import the settings now; a refused configuration exits with its one-line message (status 1)."""
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        settings.INSTALLED_APPS  # noqa: B018 - loads the settings, which refuse an unsafe configuration
    except ImproperlyConfigured as exc:
        sys.exit(f"django.core.exceptions.ImproperlyConfigured: {exc}")
