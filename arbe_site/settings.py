"""arbe settings: everything comes from the environment, with working defaults.

The defaults are the embedded configuration (`make run`): a SQLite file in
``var/``, an in-memory channel layer and the embedded Durable Streams server.
Setting ``DATABASE_URL``, ``REDIS_URL`` and ``DURABLE_STREAMS_URL`` gives the
scaled one. The README's configuration table lists every variable.
"""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from arbe_lib.env import (
    env_bool,
    env_int,
    env_list,
    env_str,
    private_dir,
    private_sqlite,
    stored_secret,
)

BASE_DIR = Path(__file__).resolve().parent.parent
# Owner only (0700): it holds the SQLite file (sessions) and the generated secrets.
VAR_DIR = private_dir(Path(env_str("ARBE_VAR_DIR", str(BASE_DIR / "var"))))

DEBUG = env_bool("DEBUG", False)
DEBUG_404 = env_bool("DEBUG_404", False)  # under DEBUG: Django's 404 page with the URL list
SECRET_KEY = env_str("SECRET_KEY") or stored_secret(VAR_DIR / "secret_key", 48)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "streams",
    "houses",
    "threads",
    "dispatch",
    "boards",
    "search",
    "attachments",
    "cli",
    "notify",
    "ops",
    "archives",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "arbe_site.nul.refuse_nul",
    "arbe_site.multipart.refuse_bad_multipart",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "ops.middleware.RequestContext",  # route, house, thread, user for logs and metrics
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    # Error pages: a page request the stream server can't serve gets 503.html.
    "arbe_site.errors.StreamOutagePage",
    # Under DEBUG, the site's 404 page rather than Django's list of every URL (DEBUG_404=1).
    "arbe_site.errors.DebugNotFoundPage",
]

ROOT_URLCONF = "arbe_site.urls"
ASGI_APPLICATION = "arbe_site.asgi.application"

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
                "arbe_site.context_processors.csp_nonce",
                "arbe_site.context_processors.me_name",
            ],
        },
    },
]

# Database: a SQLite file in var/ (WAL) unless DATABASE_URL names another.
DATABASE_URL = env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'arbe.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
        "PRAGMA busy_timeout=10000;",
        # Writers take the lock when they begin, so two never deadlock upgrading.
        "transaction_mode": "IMMEDIATE",
    }
    # The browser tests run Daphne in a child process: it needs a file, not :memory:.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
    # It holds session keys: 0600 from the start, and its -wal/-shm take its mode.
    private_sqlite(DATABASES["default"]["NAME"])
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Channel layer: in-memory in one process; Redis when processes must share events.
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # channels_redis with a pool that waits when 100 commands are in flight
            # (arbe_site/channel_layer.py), instead of failing the 101st.
            "BACKEND": "arbe_site.channel_layer.WaitingRedisChannelLayer",
            # channels_redis waits on BZPOPMIN for 5 s; redis-py's reads time out after 5 s
            # too, and a timeout that fires first kills every socket's consumer in the
            # process. A read may take longer than the wait; a dead Redis still errors.
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 15}]},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "arbe_site.channel_layer.ProcessChannelLayer"}}

# Caches. "limits" holds counters every process must share (houses/invite_limits.py): Redis
# when scaled, else a table in the database (locmem is per process, so web and backstage,
# or two Daphnes, would each count apart). Its table is made by migrate (houses 0006).
# "default" stays in-process: nothing shared belongs there.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "limits": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "arbe-limits",
        }
        if REDIS_URL
        else {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "arbe_limits_cache",
        }
    ),
}

# Backstage (director passes, replies, runs): in this process, or in `manage.py backstage`
# workers reached through the channel layer (needs REDIS_URL to cross processes).
BACKSTAGE = env_str("BACKSTAGE", "worker" if REDIS_URL else "inprocess")
if BACKSTAGE not in ("inprocess", "worker"):
    raise ValueError(f"BACKSTAGE must be 'inprocess' or 'worker', got {BACKSTAGE!r}")
BACKSTAGE_SWEEP_S = env_int("BACKSTAGE_SWEEP_S", 60)  # 0: no in-process sweep
# A thread's lease (dispatch/thread_leases.py): renewed every third of it; a worker silent
# for longer loses its threads to the others, which fence it off and answer its reply again.
BACKSTAGE_LEASE_S = env_int("BACKSTAGE_LEASE_S", 15)
# SIGTERM to a worker: how long running replies may finish before they are handed over.
BACKSTAGE_DRAIN_S = env_int("BACKSTAGE_DRAIN_S", 30)
# A coding run no live worker holds (its start never reached one) and that wrote nothing
# for this long is orphaned by the sweep (dispatch/supervision.py). A run a worker holds
# lives by that worker's lease heartbeat, however long its tool call. The fault suite's
# CI size shortens it.
RUN_SILENCE_S = env_int("RUN_SILENCE_S", 90)

# Bots: where Pi keeps its agent dir, session files and workspaces; reply limits.
PI_HOME = Path(env_str("PI_HOME", str(VAR_DIR / "pi")))
PI_AGENT_DIR = env_str("PI_AGENT_DIR")  # unset: a managed dir under PI_HOME with the demo model
PI_ISOLATION = env_str("PI_ISOLATION", "auto")  # auto: bubblewrap when it works; none: off
# Which server variables a bot may take its key from (docs/bots.md): names starting with the
# prefix (blank: none do) or listed; the server's own settings never, whatever these say.
ARBE_BOT_KEY_PREFIX = env_str("ARBE_BOT_KEY_PREFIX", "ARBE_BOTKEY_")
ARBE_BOT_KEY_ALLOW = env_list("ARBE_BOT_KEY_ALLOW", [])
DISPATCH_MAX_ATTEMPTS = env_int("DISPATCH_MAX_ATTEMPTS", 2)
DISPATCH_REPLY_CAP_S = env_int("DISPATCH_REPLY_CAP_S", 600)  # a reply may run 10 minutes
DISPATCH_EVENT_IDLE_S = env_int("DISPATCH_EVENT_IDLE_S", 120)  # silence that ends a reply
# Warm bots (dispatch/warm.py, docs/performance.md): Pi processes kept between replies per
# engine (0: none, every reply starts Pi), each for at most this many replies, this long idle,
# this much resident memory.
DISPATCH_WARM_MAX = env_int("DISPATCH_WARM_MAX", 8)
DISPATCH_WARM_REPLIES = env_int("DISPATCH_WARM_REPLIES", 50)
DISPATCH_WARM_IDLE_S = env_int("DISPATCH_WARM_IDLE_S", 120)
DISPATCH_WARM_RSS_MB = env_int("DISPATCH_WARM_RSS_MB", 400)
# The trace mirror (docs/traces.md): off unless a PostHog project key is set.
POSTHOG_API_KEY = env_str("POSTHOG_API_KEY")
POSTHOG_HOST = env_str("POSTHOG_HOST")  # blank: PostHog Cloud US
POSTHOG_QUEUE_SIZE = env_int("POSTHOG_QUEUE_SIZE", 1000)  # waiting events; more are dropped

# --- Demo model credential -------------------------------------------------------------------
# The built-in demo model (/demo-model/v1) answers only this install's Pi processes: the
# managed agent dir's models.json gives them this secret as the demo provider's API key, and
# the endpoint checks it as a Bearer token (401 otherwise). Generated into var/, never printed.
DEMO_MODEL_SECRET = env_str("DEMO_MODEL_SECRET") or stored_secret(VAR_DIR / "demo_model_secret")
# --- end demo model credential ---------------------------------------------------------------

# Search: the PostgreSQL text-search configuration of the index and of queries. "simple"
# lower-cases and keeps every word (code, handles, stop words); "english" stems. Changing
# it needs `manage.py reindex_search`. SQLite's FTS5 index always works like "simple".
SEARCH_LANGUAGE = env_str("SEARCH_LANGUAGE", "simple")

# Attachments (docs/attachments.md): limits checked on the bytes, and where files are kept:
# var/attachments (0700/0600) unless an S3-compatible bucket is named.
ARBE_ATTACHMENTS_MAX_BYTES = env_int("ARBE_ATTACHMENTS_MAX_BYTES", 25 * 1024 * 1024)
ARBE_ATTACHMENTS_MAX_PER_MESSAGE = env_int("ARBE_ATTACHMENTS_MAX_PER_MESSAGE", 10)
ARBE_ATTACHMENTS_MAX_PIXELS = env_int("ARBE_ATTACHMENTS_MAX_PIXELS", 40_000_000)
# How many images one process decodes at once (each may take pixels × 4 bytes).
ARBE_IMAGE_DECODES = env_int("ARBE_IMAGE_DECODES", 1)
ARBE_ATTACHMENTS_TYPES = env_list(
    "ARBE_ATTACHMENTS_TYPES",
    [
        *("image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"),
        *("application/pdf", "application/zip", "application/gzip"),
        *("text/plain", "text/html", "application/octet-stream"),
    ],
)
ARBE_ATTACHMENTS_S3_BUCKET = env_str("ARBE_ATTACHMENTS_S3_BUCKET")
# Read whether or not S3 is on: every variable the server reads is one no bot may name.
_S3_OPTIONS = {
    "endpoint_url": env_str("ARBE_ATTACHMENTS_S3_ENDPOINT_URL") or None,
    "access_key": env_str("ARBE_ATTACHMENTS_S3_ACCESS_KEY_ID") or None,
    "secret_key": env_str("ARBE_ATTACHMENTS_S3_SECRET_ACCESS_KEY") or None,
    "region_name": env_str("ARBE_ATTACHMENTS_S3_REGION") or None,
    "location": env_str("ARBE_ATTACHMENTS_S3_PREFIX", "attachments"),
}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "attachments": (
        {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": ARBE_ATTACHMENTS_S3_BUCKET,
                **_S3_OPTIONS,
                "default_acl": None,  # private: the app serves every file itself
                "querystring_auth": True,
                "file_overwrite": False,
            },
        }
        if ARBE_ATTACHMENTS_S3_BUCKET
        else {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {
                "location": str(private_dir(VAR_DIR / "attachments")),
                "file_permissions_mode": 0o600,
                "directory_permissions_mode": 0o700,
                "base_url": "/attachments/",  # never used: files are served by the app
            },
        }
    ),
}

# Durable Streams: the embedded server at /v1/stream/ unless DURABLE_STREAMS_URL is set.
DURABLE_STREAMS_URL = env_str("DURABLE_STREAMS_URL").rstrip("/")
DURABLE_STREAMS_SECRET = env_str("DURABLE_STREAMS_SECRET") or stored_secret(
    VAR_DIR / "durable_streams_secret"
)
DURABLE_STREAMS_LONG_POLL_MS = env_int("DURABLE_STREAMS_LONG_POLL_MS", 30_000)
# Where server code reaches the embedded server over HTTP (Daphne's own address).
ARBE_INTERNAL_URL = env_str("ARBE_INTERNAL_URL", "http://127.0.0.1:8000").rstrip("/")
# Who may create a house (houses/founding.py): "anyone" signed in, or "staff" only.
ARBE_HOUSE_CREATION = env_str("ARBE_HOUSE_CREATION", "anyone").strip().lower()
if ARBE_HOUSE_CREATION not in ("anyone", "staff"):
    raise ImproperlyConfigured("ARBE_HOUSE_CREATION is anyone or staff")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# --- Login throttling (django-axes) ----------------------------------------------------------
# Five wrong passwords in a row for one username from one address lock that pair out for 15
# minutes: a 429 page in the site's layout, even for the right password. Other users and other
# addresses are unaffected; a successful sign-in resets the count. Attempts live in the
# database (no cache needed). Behind a proxy, Daphne must get the client's address (see
# docs/security.md). Tests sign in with force_login: axes refuses authenticate() without a request.
INSTALLED_APPS += ["axes"]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out pair before any check
    "django.contrib.auth.backends.ModelBackend",
]
MIDDLEWARE += ["axes.middleware.AxesMiddleware"]  # last: turns a lockout into the 429 page
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False  # no INFO line per attempt; lockouts still log a WARNING
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# --- end login throttling --------------------------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Static files are served by the ASGI app (arbe_site.asgi) from the finders; every
# middleware here is async-capable, so async views (long-polls) never hold a thread.

# HTTPS hardening: on with HTTPS=true (production, behind TLS). With DEBUG=false,
# HTTPS=true, a SECRET_KEY and ALLOWED_HOSTS, `manage.py check --deploy` is silent.
HTTPS = env_bool("HTTPS", False)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = 31_536_000 if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if HTTPS else None
X_FRAME_OPTIONS = "DENY"

# -- Content-Security-Policy (django-csp) -------------------------------------------------
# Scripts only from this site (and a per-response nonce for any inline one); no inline
# styles or style attributes; images from this site only (chat Markdown turns off-site
# images into links, so no page fetches a URL a writer chose); the socket is same-origin
# ('self' covers ws:/wss: on this host and port). htmx runs with allowEval off
# (templates/base.html), so no 'unsafe-eval'. docs/thread-page.md has the reasons.
from csp.constants import NONCE, NONE, SELF  # noqa: E402

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF],
        "img-src": [SELF],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    },
}
# -- end of Content-Security-Policy --------------------------------------------------------

# --- Notifications (notify/, docs/notifications.md) -------------------------------------------
# Email for mentions still unread after a delay. The console backend prints mail (make run);
# EMAIL_BACKEND names SMTP (EMAIL_HOST…) or an anymail backend (ANYMAIL settings) when deployed.
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS")
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL")
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT_S", 10)  # a hung mail server never holds a page or worker
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(VAR_DIR / "mail"))  # the file backend's folder
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "arbe <arbe@localhost>")
# Account email (houses/email_address.py, docs/notifications.md "Email addresses"): how long a
# confirmation link works, and a password reset link (Django's token; single-use by design).
EMAIL_CONFIRM_MAX_AGE_S = env_int("EMAIL_CONFIRM_MAX_AGE_S", 24 * 3600)
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT_S", 3600)
# Password reset requests (houses/password_reset.py), per hour: per client address, per address.
PASSWORD_RESETS_PER_CLIENT = env_int("PASSWORD_RESETS_PER_CLIENT", 10)
PASSWORD_RESETS_PER_ADDRESS = env_int("PASSWORD_RESETS_PER_ADDRESS", 3)
NOTIFY_EMAIL_DELAY_S = env_int("NOTIFY_EMAIL_DELAY_S", 600)
NOTIFY_KEEP_DAYS = env_int("NOTIFY_KEEP_DAYS", 30)  # how long the record of what was sent stays
NOTIFY_POLL_S = env_int("NOTIFY_POLL_S", 2)  # how often a worker looks for work it wasn't woken for
# Links in email: the address people reach the site at (default: where arbe reaches itself).
SITE_URL = env_str("SITE_URL", ARBE_INTERNAL_URL).rstrip("/")
# VAPID: the key pair is generated on first run and kept in var/ (0600); the subject is
# the contact push services may use.
VAPID_KEY_FILE = VAR_DIR / "vapid_private.pem"
VAPID_SUBJECT = env_str("VAPID_SUBJECT", "mailto:arbe@localhost")
# Push endpoints the server will POST to (a leading dot: any subdomain); https only.
PUSH_SERVICE_HOSTS = env_list(
    "PUSH_SERVICE_HOSTS",
    [
        "fcm.googleapis.com",
        ".push.services.mozilla.com",
        ".notify.windows.com",
        ".push.apple.com",
    ],
)
PUSH_ALLOW_HTTP = False  # tests only: their loopback push service speaks http
# --- end notifications -----------------------------------------------------------------------

# --- Logging ---------------------------------------------------------------------------------
# One console handler on the root logger; LOG_FORMAT=json: one JSON object per line with request
# id, user, house and thread. Both redact secrets (ops/logs.py, docs/security.md).
LOG_FORMAT = env_str("LOG_FORMAT", "text").strip().lower()
if LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured("LOG_FORMAT is text or json")
from ops.logs import logging_config  # noqa: E402

LOGGING = logging_config(LOG_FORMAT, env_str("LOG_LEVEL", "INFO"))
# /metrics (every web process; a worker's --health-port) answers only "Authorization: Bearer
# <METRICS_TOKEN>"; unset, it is 404. docs/operations.md, "Metrics".
METRICS_TOKEN = env_str("METRICS_TOKEN")
# --- end logging -----------------------------------------------------------------------------
