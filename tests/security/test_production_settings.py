"""Production settings: `check --deploy` is clean on the defaults, and unsafe settings refuse to start with a
one-line ImproperlyConfigured message (each in a fresh process, as a deployment would start), whichever
entry point starts the process: manage.py, a Celery worker, the ASGI or WSGI module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOOD_KEY = "q7Vb2-rX9kLm4Tz8Wc1Ny6Hd3Pf5Js0Ga_Ue7Ri2Ko9Lw4Mx1Zt8Bv6Cn3Qs5Dy0Ej"


def manage(*args: str, **env: str | None) -> subprocess.CompletedProcess[str]:
    """Run manage.py with production settings and this environment (None removes a variable)."""
    return run([sys.executable, "manage.py", *args], **env)


def run(argv: list[str], timeout: float = 120, **env: str | None) -> subprocess.CompletedProcess[str]:
    """Run argv in the repository with production settings and this environment (None removes a variable)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("SECURE_", "AXES_"))}
    full.update(DJANGO_SETTINGS_MODULE="quizsite.settings.production", ALLOWED_HOSTS="quiz.example.org",
                SECRET_KEY=GOOD_KEY)
    full.pop("DEBUG", None)
    for key, value in env.items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = value
    return subprocess.run(argv, cwd=REPO, env=full, capture_output=True, text=True, timeout=timeout)


def test_check_deploy_is_clean_on_the_defaults():
    result = manage("check", "--deploy")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "System check identified no issues (0 silenced)."
    assert result.stderr.strip() == ""


def test_ssl_redirect_can_be_turned_off_behind_a_proxy():
    result = manage("check", "--deploy", SECURE_SSL_REDIRECT="0")
    assert "security.W008" in result.stdout + result.stderr  # warned, not refused


@pytest.mark.parametrize(
    "env, message",
    [
        ({"DEBUG": "1"}, "ImproperlyConfigured: DEBUG is on in production settings"),
        ({"SECRET_KEY": None}, "ImproperlyConfigured: SECRET_KEY is not set"),
        ({"SECRET_KEY": ""}, "ImproperlyConfigured: SECRET_KEY is empty"),
        ({"SECRET_KEY": "   "}, "ImproperlyConfigured: SECRET_KEY is empty"),
        ({"SECRET_KEY": "insecure-dev-key-change-me-in-production"}, "ImproperlyConfigured: SECRET_KEY is the development key"),
        ({"SECRET_KEY": "insecure-" + GOOD_KEY}, "ImproperlyConfigured: SECRET_KEY is the development key"),
        ({"SECRET_KEY": "short"}, "ImproperlyConfigured: SECRET_KEY is too weak (5 characters, 5 different)"),
        ({"SECRET_KEY": GOOD_KEY[:49]}, "ImproperlyConfigured: SECRET_KEY is too weak (49 characters"),
        ({"SECRET_KEY": "abcd" * 20}, "ImproperlyConfigured: SECRET_KEY is too weak (80 characters, 4 different)"),
        ({"SECURE_HSTS_SECONDS": "a year"}, "ImproperlyConfigured: SECURE_HSTS_SECONDS must be an integer"),
    ],
)
def test_unsafe_production_settings_refuse_to_start(env, message):
    result = manage("check", **env)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("django.core.exceptions." + message), result.stderr


def test_the_weak_key_rule_is_djangos_w009():
    """The numbers production refuses a key by are the ones `check --deploy` warns by (security.W009)."""
    from django.core.checks.security import base as django_checks

    code = "from quizsite.settings import production as p; print(p.SECRET_KEY_MIN_LENGTH, p.SECRET_KEY_MIN_UNIQUE_CHARACTERS)"
    result = run([sys.executable, "-c", code])  # a production module only imports in its own environment
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(django_checks.SECRET_KEY_MIN_LENGTH), str(django_checks.SECRET_KEY_MIN_UNIQUE_CHARACTERS)]


def test_a_key_at_the_limits_starts():
    key = GOOD_KEY[:5] * 10  # 50 characters, 5 different: the least W009 accepts
    assert len(key) == 50 and len(set(key)) == 5
    result = manage("check", "--deploy", SECRET_KEY=key)
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr


ENTRY_POINTS = {
    "celery-worker": [sys.executable, "-m", "celery", "-A", "quizsite", "worker"],
    "uvicorn-asgi": [sys.executable, "-m", "uvicorn", "quizsite.asgi:application", "--port", "0"],
    "wsgi": [sys.executable, "-c", "import quizsite.wsgi"],
}


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(
    "env, message",
    [
        ({"DEBUG": "1"}, "DEBUG is on in production settings"),
        ({"SECRET_KEY": ""}, "SECRET_KEY is empty"),
        ({"SECRET_KEY": "short"}, "SECRET_KEY is too weak"),
    ],
    ids=["debug", "empty-key", "short-key"],
)
def test_every_entry_point_refuses_in_one_line(tmp_path, entry, env, message):
    """A Celery worker once printed an 89-line traceback through its command line for what manage.py says in
    one line; uvicorn printed its own import traceback. (A worker that wrongly started would find only a
    broker folder of its own, never a Redis shared with other processes.)"""
    result = run(ENTRY_POINTS[entry], timeout=60, REDIS_URL=None, CELERY_BROKER_DIR=str(tmp_path), **env)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip() == result.stderr.strip().splitlines()[0], result.stderr
    assert result.stderr.startswith("django.core.exceptions.ImproperlyConfigured: " + message), result.stderr
