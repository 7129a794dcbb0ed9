"""The judge's tests need no Django. The project's pytest ``addopts`` carry ``--reuse-db``, an option
of pytest-django; when the tests run with ``-p no:django`` nobody registers it and pytest refuses to
start, so it is registered here as a no-op unless pytest-django already did."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    try:
        parser.addoption(
            "--reuse-db", action="store_true", default=False, help="(pytest-django; unused here)"
        )
    except ValueError:
        pass  # pytest-django is active and owns the option
