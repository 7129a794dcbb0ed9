#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "quizsite.settings.local")
    from django.core.management import execute_from_command_line

    from quizsite.startup import settings_load_or_exit

    settings_load_or_exit()  # a refused configuration is one line that says what to fix, not a traceback
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
