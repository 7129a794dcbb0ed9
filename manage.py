#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings.local")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018 - loads the settings, which refuse an unsafe configuration
    except ImproperlyConfigured as exc:  # one line that says what to fix, not a traceback through Django
        sys.exit(f"django.core.exceptions.ImproperlyConfigured: {exc}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
