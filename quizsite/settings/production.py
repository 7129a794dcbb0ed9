"""Production: every secret and host comes from the environment; nothing insecure by default.

The process refuses to start (ImproperlyConfigured, one line) rather than run with DEBUG on, a secret key
that anyone can read in this repository, or one short or plain enough to guess: each hands an attacker
sessions, password resets and tracebacks. Every entry point (manage.py, the ASGI and WSGI modules, the
Celery app) prints that one line and exits non-zero (quizsite/startup.py).
With a real key and ALLOWED_HOSTS, `manage.py check --deploy` is clean on the defaults below.
"""

import os

from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import DEV_SECRET_KEY, env_bool, env_int

INSECURE_KEY_PREFIXES = ("insecure-", "django-insecure-")
# Django's own rule for a strong key, which `check --deploy` only warns about (security.W009,
# django/core/checks/security/base.py: SECRET_KEY_MIN_LENGTH, SECRET_KEY_MIN_UNIQUE_CHARACTERS). Here a
# weak key refuses to start, as a missing one does: a deployment that never runs check --deploy would
# otherwise sign sessions with it. A test keeps these equal to Django's.
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_UNIQUE_CHARACTERS = 5


def secret_key_checked(value: str | None) -> str:
    """The key from the environment, or ImproperlyConfigured when it is missing, empty, a known one or weak."""
    if value is None:
        raise ImproperlyConfigured("SECRET_KEY is not set: production needs a long random key in the environment")
    if not value.strip():
        raise ImproperlyConfigured("SECRET_KEY is empty: production needs a long random key in the environment")
    if value == DEV_SECRET_KEY or value.startswith(INSECURE_KEY_PREFIXES):
        raise ImproperlyConfigured("SECRET_KEY is the development key (or starts with 'insecure-'): set a real one")
    if len(value) < SECRET_KEY_MIN_LENGTH or len(set(value)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS:
        raise ImproperlyConfigured(
            f"SECRET_KEY is too weak ({len(value)} characters, {len(set(value))} different): production needs at "
            f"least {SECRET_KEY_MIN_LENGTH} characters, {SECRET_KEY_MIN_UNIQUE_CHARACTERS} of them different "
            "(Django's security.W009); django.core.management.utils.get_random_secret_key() makes one"
        )
    return value


DEBUG = env_bool("DEBUG", False)
if DEBUG:
    raise ImproperlyConfigured("DEBUG is on in production settings: unset DEBUG (it leaks tracebacks and settings)")
SECRET_KEY = secret_key_checked(os.environ.get("SECRET_KEY"))

SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# HTTPS only. A proxy that terminates TLS and redirects itself may turn SECURE_SSL_REDIRECT off (check
# --deploy then warns about it, rightly: the app no longer enforces HTTPS on its own).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
# The load balancer's health probe speaks plain HTTP on the inside; it must not be redirected.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SERVESTATIC_USE_FINDERS = False
