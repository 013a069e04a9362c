"""Settings, read from the environment (see README "Configuration").

With nothing set the app runs embedded: a SQLite file under var/ and the in-memory channel layer.
DATABASE_URL=postgres://… and REDIS_URL=redis://… switch to PostgreSQL and channels_redis.
"""

import os
import secrets
from datetime import timedelta
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("VAR_DIR", default=str(BASE_DIR / "var")))
# var/ holds the SQLite file, the secret key and the demo passwords: the owner's alone.
VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
VAR_DIR.chmod(0o700)

env = environ.Env()
env.read_env(BASE_DIR / ".env") if (BASE_DIR / ".env").exists() else None

DEBUG = env.bool("DEBUG", default=False)


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once and kept in var/ (0600)."""
    if value := env.str("SECRET_KEY", default=""):
        return value
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "channels",
    "eventlog",
    "axes",
    "accounts",
    "campaign",
    "rolls",
    "pages",
    "webhooks",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "config.apierrors.ApiErrorsMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",
    "config.health.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = "config.wsgi.application"

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

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
# How long a request may wait for a campaign's stream lock (and for a campaign's writer slot)
# before it is answered 503 "busy" with Retry-After; see docs/operations.md.
DB_LOCK_TIMEOUT_SECONDS = env.float("DB_LOCK_TIMEOUT_SECONDS", default=5.0)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Sessions, tokens and open sessions' seeds live in this file: created 0600 (the -wal and
    # -shm files SQLite makes take the same mode), whatever the umask.
    database_file = Path(DATABASES["default"]["NAME"])
    if database_file.parent.is_dir():
        os.close(os.open(database_file, os.O_CREAT | os.O_WRONLY, 0o600))
        database_file.chmod(0o600)
    # IMMEDIATE transactions take the write lock up front, so concurrent appends queue on the
    # busy timeout instead of failing with "database is locked" on a read→write upgrade.
    # synchronous=FULL: WAL is synced at every commit, so an acknowledged roll survives a power
    # loss (NORMAL could lose the last commits; it is not worth the few hundred µs per write).
    DATABASES["default"]["OPTIONS"] = {
        "timeout": DB_LOCK_TIMEOUT_SECONDS,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
    }
    # Each thread keeps its connection (a file handle and its pragmas): opening one per request
    # and per catch-up page was a tenth of a socket's catch-up (py-spy, bench/log.py).
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=600)
    # A file, not :memory:, so that tests with threads and servers share one database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
else:
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # Django's backend, plus writes that ride with the COMMIT (eventlog/commit.py).
        DATABASES["default"]["ENGINE"] = "eventlog.backends.postgresql"
    options = DATABASES["default"].setdefault("OPTIONS", {})
    options.setdefault("connect_timeout", env.int("DB_CONNECT_TIMEOUT_SECONDS", default=2))
    # TCP keepalives after 30 s of idleness (the kernel's default is 2 hours): a pooled connection
    # whose peer forgot it (a failover, a NAT's expiry) then reports the reset on its socket,
    # where the pool's check looks (eventlog/backends/postgresql/liveness.py), and a middlebox
    # does not expire an idle one.
    options.setdefault("keepalives", 1)
    options.setdefault("keepalives_idle", 30)
    options.setdefault("keepalives_interval", 10)
    options.setdefault("keepalives_count", 3)
    # Bounds on what one campaign's trouble can cost everyone else: a lock wait, a statement,
    # and a transaction left open by a frozen process (its locks are released when it ends).
    options["options"] = " ".join(
        f"-c {name}={int(value * 1000)}"  # milliseconds
        for name, value in (
            ("lock_timeout", DB_LOCK_TIMEOUT_SECONDS),
            ("statement_timeout", env.float("DB_STATEMENT_TIMEOUT_SECONDS", default=30.0)),
            (
                "idle_in_transaction_session_timeout",
                env.float("DB_IDLE_IN_TRANSACTION_SECONDS", default=10.0),
            ),
        )
    )
    # Prepared statements for the statements that ask for them (the event recorder's, which run
    # on psycopg's server-binding cursors with prepare=True: eventlog/recorders/postgres.py).
    # Django's own cursors bind on the client and are never prepared; None, Django's default,
    # would turn preparing off for every cursor of the connection.
    options.setdefault("prepare_threshold", 2**31 - 1)
    # Under ASGI every request may run on a new thread, and a persistent connection stays with
    # its thread: keep none, and share a pool of DB_POOL_MAX_SIZE per process (0: no pool,
    # a connection per request in flight, which `max_connections` soon refuses under load).
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    if pool_size := env.int("DB_POOL_MAX_SIZE", default=10):
        # With CONN_HEALTH_CHECKS the pool checks each connection it hands out (the backend
        # asks the server only when the socket has something to say: eventlog.backends).
        options["pool"] = {
            "min_size": 1,
            "max_size": pool_size,
            # A request waits this long for a free connection; an outage is answered at once
            # (config/outage.py knows when the database is down).
            "timeout": env.float("DB_POOL_TIMEOUT_SECONDS", default=10.0),
        }
    else:
        DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=0)

# Writers of one campaign that one process lets wait on its stream lock at a time; the rest wait
# without a database connection, so one hot or stuck campaign cannot drain the pool.
WRITERS_PER_CAMPAIGN = env.int("WRITERS_PER_CAMPAIGN", default=2)
# How long an Idempotency-Key (a socket command's request_id) is remembered: retries within it
# return the first answer; after it the key may be used again.
IDEMPOTENCY_KEY_HOURS = env.int("IDEMPOTENCY_KEY_HOURS", default=48)

# The owner of the tables, for `manage.py setup_database` only (migrations, triggers, grants):
# the app itself connects with DATABASE_URL, a role that can only append to the event log.
if DATABASE_OWNER_URL := env.str("DATABASE_OWNER_URL", default=""):
    DATABASES["owner"] = {**env.db_url_config(DATABASE_OWNER_URL), "TEST": {"MIRROR": "default"}}

REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # redis-py's default 5 s socket timeout races channels_redis's 5 s blocking pop,
            # and its pool refuses past 100 connections (channels_redis#422).
            "CONFIG": {
                "hosts": [{"address": REDIS_URL, "socket_timeout": 10, "max_connections": 1000}],
                "capacity": 1000,
                "expiry": 30,
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in (
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    )
] + [{"NAME": "accounts.validators.VarietyValidator"}]
AUTHENTICATION_BACKENDS = [
    "accounts.backends.LockoutBackend",  # refuses while an account or address is locked out
    "django.contrib.auth.backends.ModelBackend",
]

# Shared by the processes when Redis is there (throttle counters must be), else per process.
CACHES = {
    "default": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            # A Redis that is down or stuck must not hold up requests (throttles fail open).
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# Logins (form and token endpoint): LOGIN_FAILURE_LIMIT wrong passwords for one account, or
# from one address, lock that account or address out for LOGIN_LOCKOUT_MINUTES (429).
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("LOGIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "accounts.lockout.lockout_response"
AXES_VERBOSE = False
AXES_DISABLE_ACCESS_LOG = True  # failures are kept (while they count), successes are not

LANGUAGE_CODE = env.str("LANGUAGE_CODE", default="ru")
LANGUAGES = [("ru", "Русский"), ("en", "English")]
# The rules engines keep their own catalogue (makemessages at the root fills it from rolls/systems).
LOCALE_PATHS = [BASE_DIR / "locale", BASE_DIR / "rolls" / "systems" / "locale"]
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").exists() else []
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve static files straight from the app's folders when nobody ran collectstatic (a checkout
# started with DEBUG off); collected files, when present, are served the same way.
WHITENOISE_USE_FINDERS = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"

REST_FRAMEWORK = {
    # Token first: DRF answers an unauthenticated request with the first class's challenge,
    # so it is 401 with `WWW-Authenticate: Token` (session authentication has none: it would be
    # 403). Without an Authorization header the token class steps aside and the pages' own
    # fetches sign in by session, with their CSRF header checked as before.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "config.schema.AutoSchema",
    "EXCEPTION_HANDLER": "campaign.api.errors.exception_handler",
    "DEFAULT_PARSER_CLASSES": ["campaign.limits.BoundedJSONParser"],
    "DEFAULT_THROTTLE_CLASSES": ["accounts.throttles.WriteThrottle"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "config.negotiation.RememberedNegotiation",
}
# Writes per user (rolls, follow-ups, sheets…, over the API and the socket): far above any real
# table's pace.
WRITE_RATE = env.str("WRITE_RATE", default="300/min")
# Socket frames per connection: a burst of LIVE_FRAME_BURST, refilled at LIVE_FRAME_RATE a second.
LIVE_FRAME_RATE = env.float("LIVE_FRAME_RATE", default=5.0)
LIVE_FRAME_BURST = env.int("LIVE_FRAME_BURST", default=30)
# A JSON request body (and a socket frame) larger than this is refused with 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("MAX_BODY_BYTES", default=64 * 1024)
SPECTACULAR_SETTINGS = {
    "TITLE": "Campaign session server API",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request bodies are components of their own (…Request), so they can refuse unknown keys
    # and mark what is required while the answers mark what is always there.
    "COMPONENT_SPLIT_REQUEST": True,
    "COMPONENT_NO_READ_ONLY_REQUIRED": False,
    # body() reads a PATCH with the whole serializer: its required fields stay required.
    "COMPONENT_SPLIT_PATCH": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.schema.add_error_component",
    ],
    # <id:…> (config/converters.py): an integer of at most 18 digits.
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "minimum": 0, "maximum": 999_999_999_999_999_999}
    },
}

SESSION_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
if SESSION_COOKIE_SECURE:  # served over HTTPS: browsers should never try plain HTTP again
    SECURE_HSTS_SECONDS = env.int("HSTS_SECONDS", default=365 * 24 * 3600)
# Origins (scheme://host:port) whose pages may open the live feed, besides the server's own
# origin; CSRF_TRUSTED_ORIGINS count too.
ALLOWED_ORIGINS = env.list("ALLOWED_ORIGINS", default=[])
if env.bool("TRUST_X_FORWARDED_PROTO", default=False):
    # Behind a TLS-terminating proxy that sets X-Forwarded-Proto (and strips it from clients).
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# The pages load scripts and styles from our own static files only (no inline script or style).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],  # fetch and the WebSocket (same host, ws:/wss:)
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "config.logformat.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": env.str("LOG_FORMAT", default="plain"),
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"axes": {"level": "WARNING"}},  # one line per failed sign-in otherwise
}

# Outgoing webhooks (webhooks/): a sender thread in each web process, or none and
# `manage.py deliver_webhooks` beside them. Private and loopback addresses are refused unless
# allowed (a GM's URL must not reach into the server's own network).
WEBHOOKS_IN_PROCESS = env.bool("WEBHOOKS_IN_PROCESS", default=True)
WEBHOOK_ALLOW_PRIVATE = env.bool("WEBHOOK_ALLOW_PRIVATE", default=False)
WEBHOOK_TIMEOUT = env.float("WEBHOOK_TIMEOUT", default=5.0)
WEBHOOK_POLL_SECONDS = env.float("WEBHOOK_POLL_SECONDS", default=5.0)
