"""The one place that reads the process environment.

Everything the project can be configured with is listed here, with its default.
Settings import these values; nothing else reads ``os.environ`` directly.
"""
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()

# Empty: see config.secret_key (a kept key on the embedded default, else refuse to start).
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "testserver", "[::1]"]
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=LOOPBACK_HOSTS)
PORT = env.int("PORT", default=8000)

# HTTPS-only cookies, HSTS and the redirect to https. Default: on outside debug as soon as the
# server answers to a name other than loopback (a local http server keeps working).
SERVED_LOCALLY = all(h in LOOPBACK_HOSTS for h in ALLOWED_HOSTS)
HTTPS = env.bool("CONVENE_HTTPS", default=not DEBUG and not SERVED_LOCALLY)
HSTS_SECONDS = env.int("CONVENE_HSTS_SECONDS", default=31536000)
# Where people open Convene in a browser, e.g. https://convene.example.org: the links in chat messages and reports
# (a run's report names its page). Empty: http://127.0.0.1:PORT when served locally, else the first host
# ALLOWED_HOSTS names (https when CONVENE_HTTPS is on).
PUBLIC_URL = env.str("CONVENE_PUBLIC_URL", default="")


def public_url() -> str:
    """The browser address of this Convene, without a trailing slash (see ``PUBLIC_URL``)."""
    if PUBLIC_URL:
        return PUBLIC_URL.rstrip("/")
    named = [h for h in ALLOWED_HOSTS if h not in LOOPBACK_HOSTS and h != "*" and not h.startswith(".")]
    if SERVED_LOCALLY or not named:
        return f"http://127.0.0.1:{PORT}"
    return f"{'https' if HTTPS else 'http'}://{named[0]}"


# Behind a TLS-terminating proxy: trust its X-Forwarded-Proto header (only if it always sets it).
BEHIND_TLS_PROXY = env.bool("CONVENE_BEHIND_TLS_PROXY", default=False)
# Where the Django admin lives (not the default "admin/", which every scanner tries).
ADMIN_PATH = env.str("CONVENE_ADMIN_PATH", default="staff/admin/").strip("/") + "/"
# Set by the embedded runtime (serve, demo, tests) for the processes it starts.
EMBEDDED = env.bool("CONVENE_EMBEDDED", default=False)
# How long a new API token lives unless its creator says otherwise (at most 365).
TOKEN_DAYS = env.int("CONVENE_TOKEN_DAYS", default=90)
# A shared cache (rate limits across web processes), e.g. redis://host:6379/1; empty: per process.
CACHE_URL = env.str("CONVENE_CACHE_URL", default="")

DATABASE_URL = env.str("DATABASE_URL", default="")
REDIS_URL = env.str("REDIS_URL", default="")

ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY", default="")
ANTHROPIC_BASE_URL = env.str("ANTHROPIC_BASE_URL", default="")
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="")
LLM_MODEL = env.str("LLM_MODEL", default="")
LLM_PROVIDER = env.str("LLM_PROVIDER", default="")
LLM_FALLBACK = env.list("LLM_FALLBACK", default=[])
# Optional: an OpenAI-compatible embeddings endpoint that re-ranks workspace search results.
EMBEDDINGS_BASE_URL = env.str("EMBEDDINGS_BASE_URL", default="")
EMBEDDINGS_MODEL = env.str("EMBEDDINGS_MODEL", default="")
EMBEDDINGS_API_KEY = env.str("EMBEDDINGS_API_KEY", default="")

TELEGRAM_BOT_TOKEN = env.str("TELEGRAM_BOT_TOKEN", default="")
TELEGRAM_WEBHOOK_SECRET = env.str("TELEGRAM_WEBHOOK_SECRET", default="")
TELEGRAM_API_BASE = env.str("TELEGRAM_API_BASE", default="https://api.telegram.org")
TEAMS_APP_ID = env.str("TEAMS_APP_ID", default="")
TEAMS_APP_PASSWORD = env.str("TEAMS_APP_PASSWORD", default="")
TEAMS_TENANT_ID = env.str("TEAMS_TENANT_ID", default="")
TEAMS_API_BASE = env.str("TEAMS_API_BASE", default="https://smba.trafficmanager.net/teams/")
TEAMS_OPENID_METADATA_URL = env.str("TEAMS_OPENID_METADATA_URL", default="https://login.botframework.com/v1/.well-known/openidconfiguration")
# Empty: https://login.microsoftonline.com/<TEAMS_TENANT_ID or botframework.com>/oauth2/v2.0/token
TEAMS_TOKEN_URL = env.str("TEAMS_TOKEN_URL", default="")

FACILITATION_MAX_TTL_HOURS = env.int("FACILITATION_MAX_TTL_HOURS", default=168)
FACILITATION_MAX_CONCURRENT = env.int("CONVENE_FACILITATION_MAX_CONCURRENT", default=5)
FACILITATION_DAILY_QUOTA = env.int("CONVENE_FACILITATION_DAILY_QUOTA", default=20)
FACILITATION_MESSAGES_PER_MINUTE = env.int("CONVENE_FACILITATION_MESSAGES_PER_MINUTE", default=3)

PARTICIPANT_TIMEOUT = env.float("CONVENE_PARTICIPANT_TIMEOUT", default=120.0)
FACILITATOR_TIMEOUT = env.float("CONVENE_FACILITATOR_TIMEOUT", default=90.0)
WORKER_CONCURRENCY = env.int("CONVENE_WORKER_CONCURRENCY", default=32)
WORKER_PROCESSES = env.int("CONVENE_WORKER_PROCESSES", default=1)
# PostgreSQL only: a connection pool of at most this many connections per process (0: no pool).
DB_POOL_MAX = env.int("CONVENE_DB_POOL_MAX", default=0)
REHEARSAL_PACE = env.float("CONVENE_REHEARSAL_PACE", default=0.0)
# A workspace pauses itself at the end of a round once nobody has acted in it for this many seconds
# (its agents would otherwise go on spending, round after round); 0: never.
WORKSPACE_IDLE_PAUSE = env.int("CONVENE_WORKSPACE_IDLE_PAUSE", default=3600)
# ... and once this many rounds in a row ended by themselves since a person last acted in it (a small
# maxEvents ends a round as soon as its agents have published); 0: never.
WORKSPACE_IDLE_ROUNDS = env.int("CONVENE_WORKSPACE_IDLE_ROUNDS", default=3)
# Set by `make demo`: the sign-in page says the demo account's password was printed in its terminal.
DEMO_ACCOUNT = env.str("CONVENE_DEMO_ACCOUNT", default="")
LEASE_MARGIN = env.float("CONVENE_LEASE_MARGIN", default=30.0)
# A step's lease: short, and extended every third of it by the worker while the model call runs
# (a heartbeat), so a dead worker's step is taken over within seconds whatever the model timeout.
# 0: no heartbeats, the lease is the longest model timeout plus LEASE_MARGIN.
STEP_LEASE = env.float("CONVENE_STEP_LEASE", default=8.0)
SWEEP_INTERVAL = env.float("CONVENE_SWEEP_INTERVAL", default=5.0)
SWEEP_STALE_SECONDS = env.float("CONVENE_SWEEP_STALE_SECONDS", default=15.0)


def default_llm_provider() -> str:
    """The provider used when an agent names none: explicit choice, else a keyed one, else rehearsal."""
    if LLM_PROVIDER:
        return LLM_PROVIDER
    if ANTHROPIC_API_KEY:
        return "anthropic"
    if OPENAI_BASE_URL:
        return "openai"
    return "rehearsal"
