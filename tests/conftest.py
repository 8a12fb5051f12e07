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


@pytest.fixture
def memory_publisher():
    """The in-memory publisher this test's pushes go to (``REALTIME_BACKEND = "memory"``)."""
    from tests.fakes.publisher import MemoryPublisher

    return MemoryPublisher()


@pytest.fixture(autouse=True)
def _test_settings(settings, monkeypatch, memory_publisher):
    from facilitation import context, records, replays
    from rooms import quiet, realtime
    from tests import event_checks

    records.forget_all()  # rows carried between steps belong to one test's database
    replays.forget_all()
    context.forget_views()
    quiet.forget_all()
    realtime.reset(installed=True)
    settings.REALTIME_BACKEND = "memory"
    realtime.install("memory", memory_publisher)
    settings.CONVENE = {**settings.CONVENE, "DEFAULT_PROVIDER": "rehearsal", "FALLBACK_PROVIDERS": []}
    event_checks.take_failures()
    # Every event this process pushes is validated against its schema first.
    monkeypatch.setattr(realtime, "push", event_checks.checked_push(realtime.push))
    yield
    realtime.reset(installed=True)
    failures = event_checks.take_failures()
    assert not failures, f"events that do not match their schema: {failures}"


@pytest.fixture
def pushed(memory_publisher):
    """What the realtime layer pushed, as (event type, payload, socket room)."""
    return memory_publisher.sent


def database_url_of_test_db() -> str:
    """A DATABASE_URL pointing other processes at the database this test run uses."""
    from django.db import connection

    cfg = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{cfg['NAME']}"
    auth = cfg["USER"] + (f":{cfg['PASSWORD']}" if cfg.get("PASSWORD") else "")
    return f"postgres://{auth}@{cfg['HOST'] or '127.0.0.1'}:{cfg['PORT'] or 5432}/{cfg['NAME']}"


def _start_stack(web: bool, extra_env: dict | None = None, beat: bool = False, supervise: bool = True):
    import io

    from config.embedded_redis import free_port
    from config.runtime import Runtime

    env = {"DATABASE_URL": database_url_of_test_db(), "LLM_PROVIDER": "rehearsal", **(extra_env or {})}
    port = free_port()
    runtime = Runtime(port=port, out=io.StringIO(), web=web, worker=True, beat=beat, extra_env=env, supervise=supervise)
    runtime.start()
    runtime.base_url = f"http://127.0.0.1:{port}"
    return runtime


@pytest.fixture
def stack_factory(transactional_db, settings):
    """Start runtimes (Redis + worker [+ beat] [+ web]) with extra environment; all stop at teardown.

    The first runtime's Redis is reused by later ones (pass nothing) so a restarted
    worker sees the same queue.
    """
    from tests.redis_target import point_at

    previous = settings.REDIS_URL
    started = []

    def start(web=False, beat=False, extra_env=None, supervise=True):
        env = dict(extra_env or {})
        if started and "REDIS_URL" not in env:
            env["REDIS_URL"] = started[0].redis_url
        runtime = _start_stack(web=web, extra_env=env, beat=beat, supervise=supervise)
        if not started:
            point_at(runtime.redis_url)
        started.append(runtime)
        return runtime

    yield start
    for runtime in reversed(started):
        runtime.stop()
    point_at(previous)


@pytest.fixture
def live_worker(stack_factory):
    """Bundled Redis and a real Celery worker (threads pool) on the test database.

    Steps and events go through the real broker; this process enqueues and emits there.
    """
    return stack_factory()


@pytest.fixture
def live_stack(stack_factory, settings):
    """Bundled Redis, a Celery worker and daphne serving config.asgi, on the test database."""
    settings.REALTIME_BACKEND = "redis"
    return stack_factory(web=True)
