"""Django settings. Values come from ``config.env``; nothing here reads the environment."""
import os


from config import env as E
from config.secret_key import resolve as _secret_key

BASE_DIR = E.BASE_DIR
SECRET_KEY = _secret_key(E.SECRET_KEY, debug=E.DEBUG, database_url=E.DATABASE_URL, var_dir=E.VAR_DIR)
DEBUG = E.DEBUG
ALLOWED_HOSTS = E.ALLOWED_HOSTS

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "channels",
    "rooms",
    "facilitation",
    "channels_bridge",
    "frontend",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.csp.ContentSecurityPolicyMiddleware",
    "facilitation.api.middleware.ApiEnvelopeMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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


# Django's SQLite backend whose worker threads queue for the write lock (config/sqlite/base.py).
SQLITE_ENGINE = "config.sqlite"
SQLITE_OPTIONS = {
    # WAL lets the web process read while a worker writes; IMMEDIATE avoids
    # upgrade deadlocks between concurrent writers. The WAL is copied back into the database
    # (a checkpoint: two fsyncs, whichever commit crosses the mark pays them) every 10,000 pages
    # instead of SQLite's 1,000: a step writes about 20 pages, mostly the same hot ones (the room,
    # its lease, the tails of its logs), so a checkpoint every ~450 steps copies little more than
    # one every ~45 did. Once checkpointed, a WAL larger than 64 MB is cut back to that size.
    "transaction_mode": "IMMEDIATE",
    "timeout": 30,
    "init_command": ("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                     "PRAGMA wal_autocheckpoint=10000; PRAGMA journal_size_limit=67108864;"),
}

# Each thread keeps its SQLite connection: opening one (a file, its PRAGMAs) cost a worker more than a
# step's own statements when it was closed after every task. PostgreSQL connections are pooled instead.
SQLITE_KEEP = {"CONN_MAX_AGE": None}  # (no health checks: the SQLite backend finds every connection usable)


def _database() -> dict:
    if E.DATABASE_URL:
        config = E.env.db_url_config(E.DATABASE_URL)
        if config["ENGINE"] == "django.db.backends.sqlite3":
            config["ENGINE"] = SQLITE_ENGINE
            config["OPTIONS"] = {**SQLITE_OPTIONS, **config.get("OPTIONS", {})}
            return config | SQLITE_KEEP
        if E.DB_POOL_MAX > 0:
            # Workers hand their connection back to the pool during every model call.
            config["OPTIONS"] = {**config.get("OPTIONS", {}), "pool": {"min_size": 1, "max_size": E.DB_POOL_MAX, "timeout": 30}}
        return config | {"CONN_MAX_AGE": 0}
    E.VAR_DIR.mkdir(exist_ok=True)
    return {
        "ENGINE": SQLITE_ENGINE,
        "NAME": str(E.VAR_DIR / "convene.sqlite3"),
        "OPTIONS": SQLITE_OPTIONS,
        **SQLITE_KEEP,
        # A file (not memory) so worker processes started by tests share it; one per test run.
        "TEST": {"NAME": str(E.VAR_DIR / f"test-convene-{os.getpid()}.sqlite3")},
    }


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Security ---------------------------------------------------------------------
# HTTPS settings follow E.HTTPS (on outside debug for any non-loopback host; CONVENE_HTTPS).
SECURE_SSL_REDIRECT = E.HTTPS
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # load balancers probe over plain http
SECURE_HSTS_SECONDS = E.HSTS_SECONDS if E.HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = E.HTTPS
SESSION_COOKIE_SECURE = E.HTTPS
CSRF_COOKIE_SECURE = E.HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if E.BEHIND_TLS_PROXY else None
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
ADMIN_PATH = E.ADMIN_PATH
# config.csp: every page gets this policy; the API's documentation pages a looser one
# (Swagger UI and Redoc inject inline styles and scripts and use blob: workers).
CONTENT_SECURITY_POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "font-src": ["'self'"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
CONTENT_SECURITY_POLICY_DOCS = {
    **CONTENT_SECURITY_POLICY,
    "script-src": ["'self'", "'unsafe-inline'"],
    "style-src": ["'self'", "'unsafe-inline'"],
    "worker-src": ["'self'", "blob:"],
}
CONTENT_SECURITY_POLICY_DOCS_PATHS = ("/api/docs", "/api/redoc")

CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": E.CACHE_URL}
          if E.CACHE_URL else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "convene"}}

AUTHENTICATION_BACKENDS = ["rooms.auth_backends.ThrottledModelBackend"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = E.VAR_DIR / "static"
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/login/"

# --- Redis, Celery -----------------------------------------------------------
# REDIS_URL empty means "embedded": the runner starts the bundled redis-server and
# exports REDIS_URL to every process it starts. Without either, the default below
# points at the embedded server's conventional port.
REDIS_URL = E.REDIS_URL or "redis://127.0.0.1:6390/0"

CELERY_BROKER_URL = REDIS_URL
# kombu's Redis transport with its repair for a lost connection (config/broker.py); a TLS URL (rediss://)
# keeps kombu's own, which sets up TLS from the scheme.
CELERY_BROKER_TRANSPORT = "config.broker:Transport" if REDIS_URL.startswith("redis://") else None
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 600}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A task in flight when Redis goes away finishes: its lease makes the redelivered copy a no-op (config/celery.py).
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {"facilitation.*": {"queue": "turns"}, "bridge.*": {"queue": "bridge"}}
# Celery's Django fixup closes a worker thread's database connections around every task unless told
# to keep them for a number of tasks. A kept SQLite connection is a file handle (see SQLITE_KEEP);
# pooled PostgreSQL connections must go back to the pool after each task, so they are not kept.
CELERY_DB_REUSE_MAX = 1000 if DATABASES["default"].get("CONN_MAX_AGE") is None else None
# The only schedule is an interval: nothing worth persisting, so beat keeps it in memory
# instead of writing a celerybeat-schedule file per process.
CELERY_BEAT_SCHEDULER = "celery.beat:Scheduler"
CELERY_BEAT_SCHEDULE = {
    "sweep-expired-leases": {
        "task": "facilitation.sweep_rooms", "schedule": E.SWEEP_INTERVAL,
        "kwargs": {"stale_seconds": E.SWEEP_STALE_SECONDS},
    },
    "sweep-bridge": {"task": "bridge.sweep", "schedule": 15.0},
    "sweep-facilitation-runs": {"task": "facilitation.sweep_runs", "schedule": 30.0},
}

# --- Realtime -----------------------------------------------------------------
# "redis": emit through socketio.RedisManager; "memory": keep emitted events in a
# list (tests); "off": store events only (they are replayed on join).
REALTIME_BACKEND = "redis"
SOCKETIO_CHANNEL = "convene-socketio"

# --- Accounts, tokens and rate limits -----------------------------------------------
# (attempts, window in seconds) for rooms.ratelimit; DRF throttle rates are in REST_FRAMEWORK.
CONVENE_DEMO_ACCOUNT = E.DEMO_ACCOUNT

CONVENE_RATE_LIMITS = {
    "signin_pair": (5, 900),    # wrong passwords for one username from one address: then locked
    "signin_user": (20, 900),   # wrong passwords for one username from anywhere
    "signin_ip": (30, 900),     # wrong passwords from one address, any username
    "bad_token_ip": (20, 60),   # unknown, expired or revoked API tokens from one address
    "socket_writes_user": (120, 60),  # socket controls (pause, stop...) and comments of one user
    # Every event a socket connection sends (joins, leaves, controls, unknown ones...): per connection and per
    # user (all their connections). A page sends a few; replaying a long room's events takes a join per 500.
    "socket_events_connection": (300, 60),
    "socket_events_user": (1200, 60),
    "facilitation_runs_user": (10, 3600),  # facilitation runs one user may start per hour
}

# --- Engine -------------------------------------------------------------------
CONVENE = {
    "DEFAULT_MAX_ROUNDS": 5,
    "MAX_ROUNDS_LIMIT": 20,
    "PARTICIPANT_TIMEOUT": E.PARTICIPANT_TIMEOUT,
    "FACILITATOR_TIMEOUT": E.FACILITATOR_TIMEOUT,
    "LEASE_MARGIN": E.LEASE_MARGIN,
    "STEP_LEASE": E.STEP_LEASE,
    "REHEARSAL_PACE": E.REHEARSAL_PACE,
    "WORKSPACE_IDLE_PAUSE": E.WORKSPACE_IDLE_PAUSE,
    "WORKSPACE_IDLE_ROUNDS": E.WORKSPACE_IDLE_ROUNDS,
    # Prompts show at least this many latest turns verbatim; older ones are summarised in
    # fixed chunks of SUMMARY_CHUNK turns (so a prompt stays append-only between chunks).
    "RECENT_TURNS_VERBATIM": 2,
    "SUMMARY_CHUNK": 3,
    "DEFAULT_PROVIDER": E.default_llm_provider(),
    "FALLBACK_PROVIDERS": E.LLM_FALLBACK,
    "DEFAULT_MODEL": E.LLM_MODEL,
    "WORKER_CONCURRENCY": E.WORKER_CONCURRENCY,
    "WORKER_PROCESSES": E.WORKER_PROCESSES,
    "TOKEN_DAYS": E.TOKEN_DAYS,
    "TOKEN_MAX_DAYS": 365,
    # Facilitation runs (ephemeral by default): TTL bounds, live runs per owner, runs per owner per day.
    "FACILITATION_MAX_TTL_HOURS": E.FACILITATION_MAX_TTL_HOURS,
    "FACILITATION_DEFAULT_TTL_HOURS": 72,
    "FACILITATION_MAX_CONCURRENT": E.FACILITATION_MAX_CONCURRENT,
    "FACILITATION_DAILY_QUOTA": E.FACILITATION_DAILY_QUOTA,
    # Floor arbitration: the most a facilitator says in a run's meeting in any minute.
    "FACILITATION_MESSAGES_PER_MINUTE": E.FACILITATION_MESSAGES_PER_MINUTE,
    # The browser address of Convene (CONVENE_PUBLIC_URL): links to pages in chat messages and reports.
    "PUBLIC_URL": E.public_url(),
}

LLM = {
    "ANTHROPIC_API_KEY": E.ANTHROPIC_API_KEY,
    "ANTHROPIC_BASE_URL": E.ANTHROPIC_BASE_URL,
    "OPENAI_API_KEY": E.OPENAI_API_KEY,
    "OPENAI_BASE_URL": E.OPENAI_BASE_URL,
}

# USD per million tokens: input, output, cache write, cache read.
LLM_PRICES = {
    "claude-opus-5": {"input": 5.0, "output": 25.0, "cache_write": 6.25, "cache_read": 0.5},
    "claude-sonnet-5": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3},
    "claude-sonnet-4-6": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.3},
    "claude-haiku-4-5": {"input": 1.0, "output": 5.0, "cache_write": 1.25, "cache_read": 0.1},
    "gpt-4o-mini": {"input": 0.15, "output": 0.6, "cache_write": 0.15, "cache_read": 0.075},
    "rehearsal": {"input": 0.0, "output": 0.0, "cache_write": 0.0, "cache_read": 0.0},
    "scripted": {"input": 0.0, "output": 0.0, "cache_write": 0.0, "cache_read": 0.0},
}
# A preset's model tier resolves to a model id here.
MODEL_TIERS = {"opus": "claude-opus-5", "sonnet": "claude-sonnet-5", "haiku": "claude-haiku-4-5"}
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5"

# Workspace search: semantic re-ranking when an embeddings endpoint is configured.
EMBEDDINGS = {
    "BASE_URL": E.EMBEDDINGS_BASE_URL,
    "MODEL": E.EMBEDDINGS_MODEL,
    "API_KEY": E.EMBEDDINGS_API_KEY,
}

# python-telegram-bot gives time periods (a 429's retry_after) as timedeltas, the type its next major version keeps,
# instead of warning at every one that ints are deprecated (channels_bridge.telegram.send reads either).
os.environ.setdefault("PTB_TIMEDELTA", "1")

BRIDGES = {
    "TELEGRAM_BOT_TOKEN": E.TELEGRAM_BOT_TOKEN,
    "TELEGRAM_WEBHOOK_SECRET": E.TELEGRAM_WEBHOOK_SECRET,
    "TELEGRAM_API_BASE": E.TELEGRAM_API_BASE,
    "TEAMS_APP_ID": E.TEAMS_APP_ID,
    "TEAMS_APP_PASSWORD": E.TEAMS_APP_PASSWORD,
    "TEAMS_TENANT_ID": E.TEAMS_TENANT_ID,
    "TEAMS_API_BASE": E.TEAMS_API_BASE,
    "TEAMS_OPENID_METADATA_URL": E.TEAMS_OPENID_METADATA_URL,
    "TEAMS_TOKEN_URL": E.TEAMS_TOKEN_URL or
        f"https://login.microsoftonline.com/{E.TEAMS_TENANT_ID or 'botframework.com'}/oauth2/v2.0/token",
    # Outbound pacing, shared by every worker through Redis token buckets: (burst, per second).
    # Telegram: about 1 message per second per chat, 20 per minute per group, 30 per second overall;
    # Teams: about 7 per second and 60 per 30 seconds per conversation.
    "RATE_LIMITS": {
        "telegram_chat": (1, 1.0),
        "telegram_group": (5, 0.25),
        "telegram_global": (30, 30.0),
        "teams_conversation": (7, 2.0),
    },
    # "redis": buckets shared by all workers; "memory": per process (unit tests).
    "RATE_LIMIT_BACKEND": "redis",
    "MAX_ATTEMPTS": 8,
}
# How rooms-level actions hand work to Celery tasks: "celery", or "memory" (collected; unit tests).
TASK_DISPATCH = "celery"

# --- REST ---------------------------------------------------------------------
# The camelCase renderer (responses) and parser (request bodies) leave the keys inside these fields
# alone: they are data, not field names. A discussion's analytics count corrections and fallbacks by
# their rule names ("no_repeat"); a facilitation run's slots are the pattern's own settings and the
# role names people chose; its artifact's "roles" maps each role name, as written ("Scribe_x",
# "note_taker" next to "noteTaker"), to who holds it. Any new response keyed by people's words goes here.
JSON_DATA_FIELDS = ("corrections", "fallbacks", "slots", "roles")
JSON_CAMEL_CASE = {"JSON_UNDERSCOREIZE": {"no_underscore_before_number": False, "ignore_fields": JSON_DATA_FIELDS,
                                          "ignore_keys": None}}

REST_FRAMEWORK = {
    # Token first: an anonymous call answers 401 with "WWW-Authenticate: Token".
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "facilitation.api.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "facilitation.api.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["djangorestframework_camel_case.render.CamelCaseJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["facilitation.api.parsers.JSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "facilitation.api.negotiation.JSONFirstNegotiation",
    "DEFAULT_METADATA_CLASS": None,
    "EXCEPTION_HANDLER": "facilitation.api.exceptions.api_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "facilitation.api.throttles.UserWriteThrottle",
        "facilitation.api.throttles.AddressWriteThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "discussions.create": "120/min",
        "discussions.lifecycle": "600/min",
        "writes.user": "120/min",   # every POST/PUT/PATCH/DELETE of one user
        "writes.ip": "600/min",     # ... and from one address
    },
}
# JSON bodies above this are refused (413) before they are read; text fields have their own
# limits (rooms.limits), well below it.
API_MAX_BODY_BYTES = 2 * 1024 * 1024

SPECTACULAR_SETTINGS = {
    "TITLE": "Convene API",
    "DESCRIPTION": (
        "Facilitated discussion rooms. Every response is the envelope "
        "`{success, data?, error?: {code, message, details?}, meta?}`; fields are camelCase. "
        "Authenticate with a session or `Authorization: Token <key>` (`python manage.py create_api_token USERNAME`)."
    ),
    "VERSION": "1.0.0",
    # OpenAPI 3.1: its schemas are JSON Schema (2020-12), so a null is `type: [..., "null"]` (or a oneOf with
    # `{type: null}`) and an exclusive bound a number, which any JSON Schema validator reads as written.
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "DiscussionStatusEnum": "rooms.models.Room.Status",
        "DiscussionKindEnum": "rooms.models.Room.Kind",
        "DiscussionFormatEnum": "rooms.models.Room.Format",
        "SeatRoleEnum": "rooms.models.Seat.Role",
        "MemberAccessEnum": "rooms.models.RoomMember.Access",
        "TurnKindEnum": "rooms.models.Observation.Kind",
        "TurnStatusEnum": "rooms.models.Observation.Status",
        "CallerAccessEnum": ["owner", "staff", "participant", "viewer"],
        "TaskStatusEnum": "rooms.models.TaskAssignment.Status",
        "AuthorKindEnum": "rooms.models.Observation.AuthorKind",
        "ObservationTypeEnum": "rooms.models.Observation.EventType",
        "TargetStatusEnum": ["active", "paused", "stopped", "concluded", "completed", "archived"],
        "FacilitationRunStateEnum": "rooms.models.FacilitationRun.State",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "drf_spectacular.contrib.djangorestframework_camel_case.camelize_serializer_fields",
        "facilitation.api.schema_hooks.close_response_objects",
        "facilitation.api.schema_hooks.close_request_bodies",
        "facilitation.api.schema_hooks.document_throttling",
    ],
    # The docs UI loads its assets from the drf-spectacular-sidecar package, served by the API itself.
    "SWAGGER_UI_DIST": "/api/docs/assets/swagger-ui-dist",
    "SWAGGER_UI_FAVICON_HREF": "/api/docs/assets/swagger-ui-dist/favicon-32x32.png",
    "REDOC_DIST": "/api/docs/assets/redoc",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {"convene": {"level": "INFO"}},
}
