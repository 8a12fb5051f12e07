"""The one place that reads the process environment.

Everything the project can be configured with is listed here, with its default.
Settings import these values; nothing else reads ``os.environ`` directly.
"""
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="convene-insecure-development-key-change-me")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver", "[::1]"])
PORT = env.int("PORT", default=8000)

DATABASE_URL = env.str("DATABASE_URL", default="")
REDIS_URL = env.str("REDIS_URL", default="")

ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY", default="")
ANTHROPIC_BASE_URL = env.str("ANTHROPIC_BASE_URL", default="")
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="")
LLM_MODEL = env.str("LLM_MODEL", default="")
LLM_PROVIDER = env.str("LLM_PROVIDER", default="")
LLM_FALLBACK = env.list("LLM_FALLBACK", default=[])

TELEGRAM_BOT_TOKEN = env.str("TELEGRAM_BOT_TOKEN", default="")
TELEGRAM_WEBHOOK_SECRET = env.str("TELEGRAM_WEBHOOK_SECRET", default="")
TELEGRAM_API_BASE = env.str("TELEGRAM_API_BASE", default="https://api.telegram.org")
TEAMS_APP_ID = env.str("TEAMS_APP_ID", default="")
TEAMS_APP_PASSWORD = env.str("TEAMS_APP_PASSWORD", default="")
TEAMS_TENANT_ID = env.str("TEAMS_TENANT_ID", default="")
TEAMS_API_BASE = env.str("TEAMS_API_BASE", default="")

PARTICIPANT_TIMEOUT = env.float("CONVENE_PARTICIPANT_TIMEOUT", default=120.0)
FACILITATOR_TIMEOUT = env.float("CONVENE_FACILITATOR_TIMEOUT", default=90.0)
WORKER_CONCURRENCY = env.int("CONVENE_WORKER_CONCURRENCY", default=32)
WORKER_PROCESSES = env.int("CONVENE_WORKER_PROCESSES", default=1)
# PostgreSQL only: a connection pool of at most this many connections per process (0: no pool).
DB_POOL_MAX = env.int("CONVENE_DB_POOL_MAX", default=0)
REHEARSAL_PACE = env.float("CONVENE_REHEARSAL_PACE", default=0.0)
LEASE_MARGIN = env.float("CONVENE_LEASE_MARGIN", default=30.0)
SWEEP_INTERVAL = env.float("CONVENE_SWEEP_INTERVAL", default=10.0)
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
