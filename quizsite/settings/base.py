"""Settings shared by every environment; deployment values come from the environment (12-factor)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parents[2]
VAR_DIR = Path(os.environ.get("THINKALIKE_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)  # the SQLite file, the broker folders and caches live here


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    """An integer from the environment; a typo fails at start-up rather than silently using the default."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        return int(value)
    except ValueError:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if not value:
        return default
    return [part.strip() for part in value.split(",") if part.strip()]


# The development key; production refuses it (and any key starting with "insecure-").
DEV_SECRET_KEY = "insecure-dev-key-change-me-in-production"
SECRET_KEY = os.environ.get("SECRET_KEY", DEV_SECRET_KEY)
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "servestatic",  # its system checks of the SERVESTATIC_ settings (the middleware serves the files)
    "channels",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "axes",
    "allauth",
    "allauth.account",
    "drf_spectacular_sidecar",
    "quizsite.core",
    "quizsite.agents",
    "quizsite.items",
    "quizsite.play",
    "quizsite.annotate",
    "quizsite.research",
    "quizsite.accounts",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "servestatic.middleware.ServeStaticMiddleware",  # WhiteNoise's ASGI-ready fork (WhiteNoise read files whole under ASGI)
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    # Last, as django-axes asks: it turns a lock-out flagged during authentication into its response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "quizsite.urls"
ASGI_APPLICATION = "quizsite.asgi.application"
WSGI_APPLICATION = "quizsite.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
        # Persistent connections: opening one costs more than most play queries (6.7 ms against 0.08 ms).
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL lets the web process read while the Celery worker writes; IMMEDIATE transactions take the write
    # lock up front, so read-then-write services serialise instead of failing; the timeout rides out waits.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": 20,
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/accounts/profile/"

# Accounts (django-allauth): sign up, sign in with a username or an email, sign out, password reset by mail.
# An email is asked for (password reset needs one) but not verified before the first sign-in: a player
# should be able to keep their guest history the moment they sign up. Sign-out is a POST (the top bar's form).
ACCOUNT_LOGIN_METHODS = {"username", "email"}
ACCOUNT_SIGNUP_FIELDS = ["username*", "email*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = os.environ.get("ACCOUNT_EMAIL_VERIFICATION", "optional")
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_LOGOUT_REDIRECT_URL = "/"
ACCOUNT_SIGNUP_REDIRECT_URL = "/accounts/profile/"
ACCOUNT_EMAIL_SUBJECT_PREFIX = "[Thinkalike] "
# Wrong passwords are django-axes' to count (below: one lock, one set of AXES_* settings, every login page);
# allauth's other limits stay, among them 30 sign-in attempts a minute per address whatever the username.
ACCOUNT_RATE_LIMITS = {"login_failed": None}

# Mail (password reset, address confirmation): printed on the console unless EMAIL_HOST names an SMTP server.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.console.EmailBackend",
)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Thinkalike <noreply@localhost>")

# Login brute force (django-axes). Its backend comes first so every authenticate(request, ...) call, the
# admin login and any later login view alike, is refused while a username + IP pair is locked out. Locking
# the pair (not the IP alone) keeps one noisy client from locking everyone behind a shared address out.
# allauth's backend signs in by username or email, in any case; every spelling of one account counts as
# that account (quizsite/accounts/lockout.py), so that varying the case or the spelling gains no guesses.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AXES_ENABLED = env_bool("AXES_ENABLED", True)
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_USERNAME_CALLABLE = "quizsite.accounts.lockout.lockout_username"
AXES_RESET_ON_SUCCESS = True
# The lock-out page: the site's layout, how long the lock lasts (AXES_COOLOFF_MINUTES) and the password reset
# link; axes renders it with its own status (AXES_HTTP_RESPONSE_CODE, 429) and answers XHR with JSON as before.
AXES_LOCKOUT_TEMPLATE = "accounts/lockout.html"
# The client address: REMOTE_ADDR unless a deployment behind a proxy names the header and the proxy count
# (a forwarded-for header that no trusted proxy sets is the client's to forge, so it is off by default).
AXES_IPWARE_META_PRECEDENCE_ORDER = tuple(env_list("AXES_IPWARE_META_PRECEDENCE_ORDER", ["REMOTE_ADDR"]))
AXES_IPWARE_PROXY_COUNT = env_int("AXES_IPWARE_PROXY_COUNT", 0) or None

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "staticfiles"))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # servestatic warns on a missing root before collectstatic
SERVESTATIC_USE_FINDERS = True

SESSION_COOKIE_AGE = 60 * 60 * 24 * 180  # guests stay the same player for months

REDIS_URL = os.environ.get("REDIS_URL", "")

if REDIS_URL:
    # Pub/sub: a group_send is one PUBLISH that each subscribed process receives once, its queues are
    # unbounded (no silent drops), and a dead process's subscriptions go with its connection.
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": os.environ.get("CHANNELS_PREFIX", "thinkalike")},
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
else:
    # One process: the play hub's own channel is the only one, drained continuously; a capacity far
    # above what it ever holds means no event is dropped (the default, 100, dropped words under load).
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": 100_000, "expiry": 60}}
    }
    # A broker that needs no server: kombu's filesystem transport, shared by web and worker processes.
    CELERY_BROKER_DIR = Path(os.environ.get("CELERY_BROKER_DIR", VAR_DIR / "celery-broker"))
    for _sub in ("queue", "processed"):
        (CELERY_BROKER_DIR / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_DIR / "queue"),
        "data_folder_out": str(CELERY_BROKER_DIR / "queue"),
        "processed_folder": str(CELERY_BROKER_DIR / "processed"),
        "control_folder": str(CELERY_BROKER_DIR / "control"),  # kombu's default is ./control in the cwd
        "store_processed": False,
    }

CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# A worker takes one message at a time; the fit task is acked late and requeued if its pool process dies
# (options on the task itself, quizsite/research/tasks.py), so it never sits unseen in a dead prefetch.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A prefork worker declares a dead pool process's task lost (and requeues it) after this many seconds
# (Celery's default is 10); a redelivered fit task is harmless even if its result was in flight.
CELERY_WORKER_LOST_WAIT = 3.0

# Fits whose worker dies (quizsite/research/README.md): a running fit writes a heartbeat at least every
# HEARTBEAT seconds; with none for LOST_AFTER seconds it ends failed ("worker lost: ..."), or is queued again
# (at most MAX_RETRIES times) if RETRY_ON_WORKER_LOSS. Page views, API reads and each worker's start reap;
# on Redis every live worker also sends the reaper task every REAP_EVERY s. Not on the filesystem broker by
# default: kombu's filesystem transport can hand a consumer a message file before it is written, which
# stops the worker, and a worker publishing every few seconds into its own queue makes that likely.
RESEARCH_FIT_HEARTBEAT_SECONDS = float(os.environ.get("RESEARCH_FIT_HEARTBEAT_SECONDS", "5"))
RESEARCH_FIT_LOST_AFTER_SECONDS = float(os.environ.get("RESEARCH_FIT_LOST_AFTER_SECONDS", "30"))
RESEARCH_FIT_REAP_EVERY_SECONDS = float(os.environ.get("RESEARCH_FIT_REAP_EVERY_SECONDS", "10" if REDIS_URL else "0"))
RESEARCH_FIT_RETRY_ON_WORKER_LOSS = env_bool("RESEARCH_FIT_RETRY_ON_WORKER_LOSS", False)
RESEARCH_FIT_MAX_RETRIES = int(os.environ.get("RESEARCH_FIT_MAX_RETRIES", "1"))
# torch CPU threads while a fit embeds and trains, in a worker or `fit_caimira --wait` alike (0: torch's own
# default, one per core). 1 by default: a fit's steps are thin matrix products over a few MB, bound by memory,
# and a prefork pool runs several fits (and the web processes) on the same cores, so more threads only
# contend (quizsite/research/README.md, benchmarks/fit_worker.py).
RESEARCH_FIT_THREADS = env_int("RESEARCH_FIT_THREADS", 1)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Thinkalike API",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The browsable docs load their scripts from this server (drf-spectacular-sidecar), never from a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "daphne": {"level": "WARNING"},
        "django.channels.server": {"level": "WARNING"},
        "axes.apps": {"level": "WARNING"},  # its start-up banner on every command; lock-outs still log
    },
}

# Words never used as La Ghigliottina distractors (quizsite/items/blocklist.py): "glin-profanity" (the
# default when empty), "none", or word files, comma-separated. `import_items --blocklist` overrides it.
GHIGLIOTTINA_BLOCKLIST = os.environ.get("GHIGLIOTTINA_BLOCKLIST", "")

# Play sockets: a client (address, browser session) holds at most so many at once, and an address sends
# at most so many messages a second (a whole school behind one NAT address still fits).
PLAY_MAX_CONN_PER_IP = int(os.environ.get("PLAY_MAX_CONN_PER_IP", "64"))
PLAY_MAX_CONN_PER_SESSION = int(os.environ.get("PLAY_MAX_CONN_PER_SESSION", "8"))
PLAY_IP_MSGS_PER_S = float(os.environ.get("PLAY_IP_MSGS_PER_S", "200"))
PLAY_IP_JOINS_PER_S = float(os.environ.get("PLAY_IP_JOINS_PER_S", "200"))
PLAY_JOIN_WAIT_MAX_S = float(os.environ.get("PLAY_JOIN_WAIT_MAX_S", "10"))

# Play defaults (PROTOCOL.md); rooms override them through their settings.
PLAY_DEFAULTS = {
    "ms_per_word": 250,
    "answer_ms": 8000,
    "dead_ms": 5000,
    "set": "",
    "category": "",
    "power_points": 15,
    "points": 10,
    "neg_points": -5,
    "bots": [],  # names of the AI agents sitting in the room as players (play/bots.py)
}

# Bots (play/bots.py): the server starts a bot client when a room lists it; the client connects to the
# server's own websocket address like a browser. "celery" runs bots on the `bots` queue (quickstart
# starts a worker for it), "inline" as asyncio tasks of the ASGI process that starts them, "off" never.
PLAY_BOT_WS_BASE = os.environ.get("PLAY_BOT_WS_BASE", "ws://127.0.0.1:8000")
# The Origin a bot's socket sends (the websocket router admits ALLOWED_HOSTS origins only); default: the
# http(s) form of PLAY_BOT_WS_BASE. Behind a proxy with a public name, e.g. https://quiz.example.org.
PLAY_BOT_ORIGIN = os.environ.get("PLAY_BOT_ORIGIN", "")
PLAY_BOT_LAUNCHER = os.environ.get("PLAY_BOT_LAUNCHER", "celery")
PLAY_BOT_QUEUE = os.environ.get("PLAY_BOT_QUEUE", "bots")
PLAY_BOT_IDLE_S = float(os.environ.get("PLAY_BOT_IDLE_S", "60"))  # a bot leaves a room with no person online this long
PLAY_BOT_TOKEN_MAX_AGE_S = int(os.environ.get("PLAY_BOT_TOKEN_MAX_AGE_S", str(7 * 24 * 3600)))
# Modules that register extra agent kinds (AgentKind subclasses with @register) for bots, comma-separated.
AGENT_KIND_MODULES = [m for m in os.environ.get("AGENT_KIND_MODULES", "").split(",") if m.strip()]
CELERY_TASK_ROUTES = {"play.bot_run": {"queue": PLAY_BOT_QUEUE}}
