"""Fixtures for the Socket.IO tests: a live stack (Redis, worker, daphne) and socket clients."""
import asyncio
import json
import time

import pytest

from rooms.events import EventType
from tests.event_checks import check, check_replayed


def session_cookie(user) -> str:
    """A real Django session for ``user`` (stored in the test database daphne reads)."""
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def api_token(user) -> str:
    from tests.factories import make_token

    return make_token(user)


class Recorder:
    """An AsyncClient that records every discussion event it receives, in arrival order.

    Each event, and each replayed one in a join's answer, is checked against its schema.
    """

    TYPES = tuple(t.value for t in EventType if t is not EventType.SESSION_REVOKED)

    def __init__(self, base_url: str, *, cookie: str | None = None, token: str | None = None):
        import socketio

        self.base_url = base_url
        self.cookie, self.token = cookie, token
        self.sio = socketio.AsyncClient(reconnection=False)
        self.events: list[dict] = []
        for name in self.TYPES:
            self.sio.on(name, self._handler(name))

    def _handler(self, name):
        async def handler(data):
            check(name, data)
            self.events.append({"type": name, **data})
        return handler

    async def connect(self):
        headers = {"Cookie": self.cookie} if self.cookie else {}
        auth = {"token": self.token} if self.token else None
        await self.sio.connect(self.base_url, headers=headers, auth=auth, transports=["websocket"],
                               socketio_path="socket.io", wait_timeout=10)
        return self

    async def call(self, event, data, timeout=15):
        answer = await self.sio.call(event, data, timeout=timeout)
        if isinstance(answer, dict) and answer.get("missed"):
            check_replayed(answer["missed"])
        return answer

    async def close(self):
        if self.sio.connected:
            await self.sio.disconnect()

    def seqs(self):
        return [e["seq"] for e in self.events]


async def until(predicate, timeout=30.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


def _stack(stack_factory, settings, tmp_path, delay: float):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"purpose": "contribution", "delay": delay, "text": "Turn of {speaker} in round {round}.\nQ: what next?\nCONCERN: cost"},
    ]))
    runtime = stack_factory(web=True, extra_env={"LLM_PROVIDER": "scripted", "CONVENE_SCRIPT_FILE": str(script)})
    settings.REALTIME_BACKEND = "redis"
    return runtime


@pytest.fixture
def socket_stack(stack_factory, settings, tmp_path):
    """Redis + worker + daphne on the test database, with a model slow enough to watch.

    Each participant turn takes 0.3 s (scripted provider), so a discussion runs for a
    few seconds and events keep arriving while a test joins, leaves and reconnects.
    """
    return _stack(stack_factory, settings, tmp_path, delay=0.3)


@pytest.fixture
def slow_socket_stack(stack_factory, settings, tmp_path):
    """As ``socket_stack``, with 1.5 s participant turns: long enough to pause in the middle of one."""
    return _stack(stack_factory, settings, tmp_path, delay=1.5)


def run_async(coroutine):
    """Run a coroutine to completion in a thread of its own.

    ``asyncio.run`` refuses to start where an event loop already runs (Playwright's
    sync API keeps one in the main thread once a browser test has run).
    """
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
