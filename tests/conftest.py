import os

import pytest

# Fake credentials: an accidental call to a real service fails fast on loopback.
os.environ.setdefault("ANTHROPIC_API_KEY", "test-key-not-real")
os.environ.setdefault("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
os.environ.setdefault("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
os.environ.setdefault("TELEGRAM_BOT_TOKEN", "123456:TEST")
os.environ.setdefault("TELEGRAM_API_BASE", "http://127.0.0.1:9")
os.environ.setdefault("TEAMS_API_BASE", "http://127.0.0.1:9")
os.environ.setdefault("LLM_PROVIDER", "rehearsal")


@pytest.fixture(autouse=True)
def _test_settings(settings):
    from rooms import realtime

    settings.REALTIME_BACKEND = "memory"
    settings.CONVENE = {**settings.CONVENE, "DEFAULT_PROVIDER": "rehearsal", "FALLBACK_PROVIDERS": []}
    realtime.reset()
    yield
    realtime.reset()


@pytest.fixture
def pushed():
    """What the realtime layer pushed, as (event type, payload, socket room)."""
    from rooms import realtime

    return realtime.sent
