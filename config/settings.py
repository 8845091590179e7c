"""Casebook settings: one file, everything that differs between machines comes
from the environment (django-environ). See .env.example for the variables."""

from datetime import timedelta
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured
from django.core.management.utils import get_random_secret_key
from django.utils.translation import gettext_lazy as _

from collectors.limits import Limits

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
if (BASE_DIR / ".env").exists():
    environ.Env.read_env(BASE_DIR / ".env")

DEBUG = env.bool("DEBUG", default=False)
# loadcases: the published library of kb/data/library with the founding cases
# (the test suite turns it off, see kb.services.library_enabled).
CASEBOOK_KB_LIBRARY = env.bool("CASEBOOK_KB_LIBRARY", default=True)
DATA_DIR = Path(env("CASEBOOK_DATA_DIR", default=str(BASE_DIR / "data")))
DATA_DIR.mkdir(parents=True, exist_ok=True)


def _embedded_secret_key() -> str:
    """The embedded default keeps a random key in the data directory, so a fresh
    clone needs no configuration and sessions survive restarts. Production sets
    SECRET_KEY in the environment."""
    path = DATA_DIR / "secret_key"
    if not path.exists():
        path.write_text(get_random_secret_key())
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = env("SECRET_KEY", default="") or _embedded_secret_key()


def _placeholder_secret_keys() -> set[str]:
    """Keys that are known to everyone: the one of .env.example (read from it,
    so the two never drift apart) and the usual placeholders."""
    known = {
        "change-me-to-a-long-random-string",
        "change-me",
        "changeme",
        "secret",
        "secret-key",
        "your-secret-key",
    }
    example = BASE_DIR / ".env.example"
    if example.exists():
        for line in example.read_text().splitlines():
            if line.startswith("SECRET_KEY="):
                known.add(line.split("=", 1)[1].strip().strip("'\""))
    return {k.lower() for k in known if k}


if not DEBUG and (
    SECRET_KEY.strip().lower() in _placeholder_secret_keys() or SECRET_KEY.startswith("django-insecure-")
):
    raise ImproperlyConfigured(
        "SECRET_KEY is a published placeholder (.env.example's or another well-known one): "
        "anyone could forge sessions and password-reset links. Set a long random SECRET_KEY "
        "(python -c 'import secrets; print(secrets.token_urlsafe(50))') or leave it unset "
        "to use the key generated in the data directory."
    )
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

MEDIA_ROOT = DATA_DIR / "uploads"
MEDIA_URL = "/media/"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "accounts",
    "collectors",
    "triage",
    "kb",
    "troubleshoot",
    "desk",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

# An empty DATABASE_URL (a blank line in .env) means "not set", not "no engine".
DATABASE_URL = env("DATABASE_URL", default="") or f"sqlite:///{DATA_DIR / 'casebook.sqlite3'}"
DATABASES = {"default": environ.Env.db_url_config(DATABASE_URL)}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the in-process worker and the web server share the file.
    DATABASES["default"].setdefault("OPTIONS", {})
    DATABASES["default"]["OPTIONS"].setdefault(
        "init_command", "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    )
    DATABASES["default"]["OPTIONS"].setdefault("timeout", 20)
else:
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
    # A persistent connection the server dropped (restart, failover) is noticed
    # before the request uses it, not as an error half-way through.
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
# The Docker image builds static files outside the /data volume.
STATIC_ROOT = Path(env("CASEBOOK_STATIC_ROOT", default=str(DATA_DIR / "static")))
# WhiteNoise warns on every start when the directory is absent (before collectstatic).
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": env("CASEBOOK_STORAGE", default="django.core.files.storage.FileSystemStorage")},
    "staticfiles": {
        "BACKEND": "config.storage.StaticFilesStorage"
        if not DEBUG and env.bool("CASEBOOK_MANIFEST_STATIC", default=True)
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# --- uploads and archive limits (collectors.archive reads these) -------------
# The defaults are collectors.limits.Limits' own; these variables override them.
_LIMIT_VARIABLES = {
    "upload_bytes": "CASEBOOK_MAX_UPLOAD_BYTES",
    "members": "CASEBOOK_MAX_MEMBERS",
    "unpacked_bytes": "CASEBOOK_MAX_UNPACKED_BYTES",
    "ratio": "CASEBOOK_MAX_RATIO",
    "artifact_bytes": "CASEBOOK_MAX_ARTIFACT_BYTES",
    # transcripts and text of unknown kind: only their first bytes are read
    "text_bytes": "CASEBOOK_MAX_TEXT_BYTES",
    # the work budget of one upload: outputs parsed, and libvirt domain XMLs among them
    "parsed_artifacts": "CASEBOOK_MAX_PARSED_ARTIFACTS",
    "domains": "CASEBOOK_MAX_DOMAINS",
}
CASEBOOK_LIMITS = {
    name: env.int(variable, default=getattr(Limits, name)) for name, variable in _LIMIT_VARIABLES.items()
}
# Request bodies are streamed to disk by Django's upload handlers; this bounds
# what is held in memory for non-file fields.
DATA_UPLOAD_MAX_MEMORY_SIZE = 20 << 20
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 << 20
FILE_UPLOAD_TEMP_DIR = str(DATA_DIR / "tmp")
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)

# --- Celery -------------------------------------------------------------------
REDIS_URL = env("REDIS_URL", default="")
# An explicit host keeps kombu from warning "No hostname was supplied" on every send.
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
CELERY_RESULT_BACKEND = None
# Without a broker the embedded default runs tasks in-process.
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Several Casebook instances (or test runs) can share one Redis by using
# different queue names.
CELERY_TASK_DEFAULT_QUEUE = env("CASEBOOK_QUEUE", default="celery")
# --- bounded work: time limits, leases, beat queue (issue 15) -------------------
# Beat tasks (heartbeat, sweeper) have their own queue and their own worker
# (docker-compose ``beat-worker``), so analyses filling every analysis worker
# never stop the sweeper or the heartbeat.
CASEBOOK_BEAT_QUEUE = env(
    "CASEBOOK_BEAT_QUEUE",
    default="casebook-beat" if CELERY_TASK_DEFAULT_QUEUE == "celery" else f"{CELERY_TASK_DEFAULT_QUEUE}-beat",
)
CELERY_TASK_ROUTES = {
    "triage.tasks.sweep_stale_snapshots": {"queue": CASEBOOK_BEAT_QUEUE},
    "accounts.tasks.record_heartbeat": {"queue": CASEBOOK_BEAT_QUEUE},
}
CASEBOOK_SWEEP_SECONDS = env.float("CASEBOOK_SWEEP_SECONDS", default=15)
CASEBOOK_HEARTBEAT_SECONDS = env.float("CASEBOOK_HEARTBEAT_SECONDS", default=15)
# Every worker announces the queues it consumes this often (in Redis, expiring
# after three periods); /healthz reads them (config.celery).
CASEBOOK_CONSUMER_SECONDS = env.float("CASEBOOK_CONSUMER_SECONDS", default=10)
# Keys of those announcements and of the "still waiting in the broker" marks
# of sent analyses (the sweeper does not send a second copy while one waits);
# a mark is forgotten after WAITING_MARK_SECONDS.
CASEBOOK_BROKER_KEY_PREFIX = env("CASEBOOK_BROKER_KEY_PREFIX", default="casebook")
CASEBOOK_WAITING_MARK_SECONDS = env.int("CASEBOOK_WAITING_MARK_SECONDS", default=24 * 3600)
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-snapshots": {
        "task": "triage.tasks.sweep_stale_snapshots",
        "schedule": CASEBOOK_SWEEP_SECONDS,
        # A sweep nobody ran in time is replaced by the next one.
        "options": {"expires": CASEBOOK_SWEEP_SECONDS},
    },
    # Lets /healthz and the dashboard tell when a worker last ran a task.
    "worker-heartbeat": {
        "task": "accounts.tasks.record_heartbeat",
        "schedule": CASEBOOK_HEARTBEAT_SECONDS,
        "options": {"expires": CASEBOOK_HEARTBEAT_SECONDS},
    },
}
# One analysis (parsing + rules + writing) may take this long: past the soft
# limit the snapshot fails with "analysis took too long"; the hard limit (soft +
# 30 s) kills the pool process if the soft one could not stop it.
CASEBOOK_ANALYSIS_SOFT_LIMIT = env.int("CASEBOOK_ANALYSIS_SOFT_LIMIT", default=120)
CASEBOOK_ANALYSIS_HARD_LIMIT = env.int(
    "CASEBOOK_ANALYSIS_HARD_LIMIT", default=CASEBOOK_ANALYSIS_SOFT_LIMIT + 30
)
# One artifact may take this long / be this large to parse; past either it is
# skipped with an artifact error (collectors.assemble.run_parser).
CASEBOOK_PARSE_SECONDS = env.float("CASEBOOK_PARSE_SECONDS", default=30)
CASEBOOK_PARSE_MAX_BYTES = env.int("CASEBOOK_PARSE_MAX_BYTES", default=64 << 20)
# A running analysis holds a lease its worker renews every RENEW seconds; the
# sweeper re-queues an analysis only when its lease has expired (worker gone).
CASEBOOK_LEASE_SECONDS = env.float("CASEBOOK_LEASE_SECONDS", default=30)
CASEBOOK_LEASE_RENEW_SECONDS = env.float("CASEBOOK_LEASE_RENEW_SECONDS", default=10)
# A finished analysis whose write fails on a transient database error (a
# restart, a fail-over) tries the write again after 1, 2, 4 ... s (at most
# MAX_DELAY apart) for up to this many seconds in all, rather than running
# the analysis again (the lease is renewed meanwhile); the retries count
# against the soft time limit.
CASEBOOK_WRITE_RETRY_SECONDS = env.float("CASEBOOK_WRITE_RETRY_SECONDS", default=60)
CASEBOOK_WRITE_RETRY_MAX_DELAY = env.float("CASEBOOK_WRITE_RETRY_MAX_DELAY", default=15)
# Snapshots left ``queued`` this long (enqueue lost: broker down) are sent again.
CASEBOOK_STALE_AFTER_SECONDS = env.int("CASEBOOK_STALE_AFTER_SECONDS", default=60)
# Retro-scans (triage.retroscan): new knowledge matched against the newest
# stored snapshot of every host, BATCH hosts per transaction; one task works
# for TASK_SECONDS, then queues the next (other work gets the worker in
# between); a scan's lease lasts LEASE_SECONDS from its last batch, after which
# the sweeper sends an abandoned scan again (it resumes after its last batch).
CASEBOOK_RETRO_BATCH = env.int("CASEBOOK_RETRO_BATCH", default=200)
CASEBOOK_RETRO_TASK_SECONDS = env.float("CASEBOOK_RETRO_TASK_SECONDS", default=20)
CASEBOOK_RETRO_LEASE_SECONDS = env.float("CASEBOOK_RETRO_LEASE_SECONDS", default=120)
# /healthz says "degraded" when no worker heartbeat is this recent; with
# CASEBOOK_HEALTHZ_STRICT it then answers 503 instead of 200.
CASEBOOK_HEARTBEAT_STALE_SECONDS = env.float(
    "CASEBOOK_HEARTBEAT_STALE_SECONDS", default=max(60.0, 3 * CASEBOOK_HEARTBEAT_SECONDS)
)
CASEBOOK_HEALTHZ_STRICT = env.bool("CASEBOOK_HEALTHZ_STRICT", default=False)
# Infrastructure errors (database or Redis unreachable) answer 503 with this
# Retry-After: JSON under /api/, a page elsewhere (config/unavailable.py).
CASEBOOK_RETRY_AFTER_SECONDS = env.int("CASEBOOK_RETRY_AFTER_SECONDS", default=10)
MIDDLEWARE = [*MIDDLEWARE, "config.unavailable.InfrastructureErrorMiddleware"]

# --- REST framework ------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    # api: one error body for every API error (config/api_errors.py).
    "EXCEPTION_HANDLER": "config.api_errors.api_exception_handler",
    # api: uploads are throttled per user (triage.api.UploadThrottle).
    "DEFAULT_THROTTLE_RATES": {"uploads": env("CASEBOOK_UPLOAD_RATE", default="120/min")},
}
# Byte-weighted upload rate (config.ratelimit.upload_weight): an upload counts once per
# started N bytes of its declared length against CASEBOOK_UPLOAD_RATE; 0 (the default):
# every upload counts once whatever its size.
CASEBOOK_UPLOAD_WEIGHT_BYTES = env.int("CASEBOOK_UPLOAD_WEIGHT_BYTES", default=0)
SPECTACULAR_SETTINGS = {
    "TITLE": "Casebook API",
    "DESCRIPTION": "Host snapshots, findings, cases and troubleshooting sessions.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # DRF views opt out of LoginRequiredMiddleware; only sign-in and /healthz are public.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # api: every operation documents the common error body.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.api_errors.add_error_responses",
    ],
    "ENUM_NAME_OVERRIDES": {
        "SnapshotStatusEnum": "triage.models.Snapshot.Status",
        "PlannedMeasureStatusEnum": "troubleshoot.models.PlannedMeasure.Status",
        "CaseStepStatusEnum": "kb.models.CaseMeasure.Status",
    },
}

# --- security -------------------------------------------------------------------
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Production sits behind HTTPS; the embedded default serves plain HTTP on loopback.
HTTPS = env.bool("CASEBOOK_HTTPS", default=False)
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = HTTPS and env.bool("SECURE_SSL_REDIRECT", default=True)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Container healthchecks call /healthz over plain HTTP from inside the container.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
}

# --- one rate limit, sign-in lockout, request limits, CSP (issue 15) ----------
# The default cache holds the upload rate counters (config.ratelimit) that the
# API, the web form and the wizard share: Redis when REDIS_URL is set, so every
# gunicorn worker sees the same counter; local memory for the embedded default.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": env("CASEBOOK_CACHE_URL", default="") or REDIS_URL,
        "KEY_PREFIX": env("CASEBOOK_CACHE_PREFIX", default="casebook"),
    }
    if REDIS_URL or env("CASEBOOK_CACHE_URL", default="")
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "casebook"}
}
# Upload views answer 413 / 429 from the headers, before CSRF reads the body.
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.csrf.CsrfViewMiddleware"),
    "config.request_limits.UploadGuardMiddleware",
)
MIDDLEWARE.insert(
    MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
    "config.csp.ContentSecurityPolicyMiddleware",
)
# Sign-in: django-axes counts wrong passwords per (account, address) in the
# database (shared by every worker); at the limit that pair (or, past their
# ceilings, the address or the account) is locked for the cool-off period,
# with a page that says so.
INSTALLED_APPS.append("axes")
AUTHENTICATION_BACKENDS = [
    "accounts.backends.LockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
MIDDLEWARE.append("axes.middleware.AxesMiddleware")
# Counted per (account, address): a stranger's wrong passwords lock only that
# pair; an address over the limit across accounts, or an account over
# ACCOUNT_LIMIT from any addresses, is locked altogether (accounts.backends).
CASEBOOK_LOGIN_FAILURE_LIMIT = env.int("CASEBOOK_LOGIN_FAILURE_LIMIT", default=10)
CASEBOOK_LOGIN_ACCOUNT_LIMIT = env.int("CASEBOOK_LOGIN_ACCOUNT_LIMIT", default=50)
AXES_FAILURE_LIMIT = "accounts.backends.failure_limit"
AXES_COOLOFF_TIME = timedelta(minutes=env.int("CASEBOOK_LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "accounts.views.locked_out"
# Successful sign-ins are not recorded: the table would only grow.
AXES_DISABLE_ACCESS_LOG = True
# No start-up banner on every management command; lockouts are in the admin (Access attempts).
AXES_VERBOSE = False
# Content-Security-Policy (config.csp): scripts and styles from our own static
# files only; no inline script, no inline style, nothing from other origins.
CASEBOOK_CSP = env(
    "CASEBOOK_CSP",
    default="default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'",
)
# Permissions-Policy (config.csp): the pages use no browser feature that needs one.
CASEBOOK_PERMISSIONS_POLICY = env(
    "CASEBOOK_PERMISSIONS_POLICY",
    default="accelerometer=(), autoplay=(), camera=(), display-capture=(), encrypted-media=(), "
    "fullscreen=(), geolocation=(), gyroscope=(), magnetometer=(), microphone=(), midi=(), "
    "payment=(), picture-in-picture=(), publickey-credentials-get=(), screen-wake-lock=(), "
    "sync-xhr=(), usb=(), xr-spatial-tracking=()",
)

# Axes logs every sign-in at INFO; lockouts (WARNING) are what an operator needs.
LOGGING.setdefault("loggers", {})["axes"] = {"level": env("AXES_LOG_LEVEL", default="WARNING")}

# --- directory sign-in (issue 16) ---------------------------------------------
# LDAP through django-auth-ldap when LDAP_SERVER_URI is set (config/ldap.py
# reads the LDAP_* variables); local accounts keep signing in through
# ModelBackend, which stays after it.
from config.ldap import ldap_settings  # noqa: E402

_LDAP = ldap_settings(env)
if _LDAP:
    globals().update(_LDAP)
    AUTHENTICATION_BACKENDS.insert(
        AUTHENTICATION_BACKENDS.index("django.contrib.auth.backends.ModelBackend"),
        "accounts.directory.DirectoryBackend",
    )
    LOGGING["loggers"]["django_auth_ldap"] = {"level": env("LDAP_LOG_LEVEL", default="WARNING")}
# --- webhooks, e-mail notifications, metrics (issue 16; docs/integrations.md) ----
INSTALLED_APPS.append("integrations")
# Links in webhook payloads and e-mails: the public address, e.g.
# https://casebook.example.com (unset: paths only).
CASEBOOK_BASE_URL = env("CASEBOOK_BASE_URL", default="")
# One POST may take this long (s); a failed one is retried RETRIES times, after
# BACKOFF, 2xBACKOFF, 4xBACKOFF ... seconds, never more than BACKOFF_MAX apart.
CASEBOOK_WEBHOOK_TIMEOUT = env.float("CASEBOOK_WEBHOOK_TIMEOUT", default=5)
CASEBOOK_WEBHOOK_RETRIES = env.int("CASEBOOK_WEBHOOK_RETRIES", default=6)
CASEBOOK_WEBHOOK_BACKOFF = env.int("CASEBOOK_WEBHOOK_BACKOFF", default=10)
CASEBOOK_WEBHOOK_BACKOFF_MAX = env.int("CASEBOOK_WEBHOOK_BACKOFF_MAX", default=600)
# The delivery log keeps ended deliveries (delivered or failed) this many days;
# beat prunes it daily. 0 keeps it forever.
CASEBOOK_DELIVERY_RETENTION_DAYS = env.int("CASEBOOK_DELIVERY_RETENTION_DAYS", default=30)
CELERY_TASK_ROUTES["integrations.tasks.prune_deliveries"] = {"queue": CASEBOOK_BEAT_QUEUE}
CELERY_BEAT_SCHEDULE["prune-webhook-deliveries"] = {
    "task": "integrations.tasks.prune_deliveries",
    "schedule": 24 * 3600,
    "options": {"expires": 3600},
}
# SSRF: webhook URLs resolving to anything but a public address are refused:
# loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7), CGNAT (100.64/10),
# link-local (cloud metadata), multicast, unspecified and reserved ranges,
# IPv4-mapped IPv6 judged by its IPv4 address, plus the metadata addresses
# below (168.63.129.16 is a public address). CASEBOOK_WEBHOOK_ALLOW lists the
# CIDRs and host names of internal receivers exempt from every block
# (CASEBOOK_WEBHOOK_ALLOWED_NETWORKS, its former name, is still read).
CASEBOOK_WEBHOOK_BLOCKED_NETWORKS = env.list(
    "CASEBOOK_WEBHOOK_BLOCKED_NETWORKS",
    default=[
        "169.254.169.254/32",
        "168.63.129.16/32",
        "100.100.100.200/32",
        "fd00:ec2::254/128",
        "0.0.0.0/8",
    ],
)
CASEBOOK_WEBHOOK_ALLOW = [
    *env.list("CASEBOOK_WEBHOOK_ALLOW", default=[]),
    *env.list("CASEBOOK_WEBHOOK_ALLOWED_NETWORKS", default=[]),
]
# E-mail through Django's mail settings; without EMAIL_HOST no e-mail is sent
# (the messages go to the log instead).
EMAIL_HOST = env("EMAIL_HOST", default="")
EMAIL_BACKEND = env(
    "EMAIL_BACKEND",
    default="django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=False)
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="casebook@localhost")
EMAIL_SUBJECT_PREFIX = env("EMAIL_SUBJECT_PREFIX", default="[Casebook] ")
CASEBOOK_EMAIL_LANGUAGE = env("CASEBOOK_EMAIL_LANGUAGE", default="en")
# /metrics answers a request carrying "Authorization: Bearer <token>" or coming
# from an address in the allow-list (CIDRs; the peer address, never
# X-Forwarded-For); nobody else, so by default nobody.
CASEBOOK_METRICS_TOKEN = env("CASEBOOK_METRICS_TOKEN", default="")
CASEBOOK_METRICS_ALLOW = env.list("CASEBOOK_METRICS_ALLOW", default=[])
# Request latency is measured in each web process; with several gunicorn
# workers set PROMETHEUS_MULTIPROC_DIR (an empty directory, wiped at start)
# so /metrics adds them up (prometheus_client multiprocess mode).
MIDDLEWARE.insert(0, "integrations.metrics.RequestLatencyMiddleware")
