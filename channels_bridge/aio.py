"""Running the async Telegram client from our synchronous Django and Celery code.

python-telegram-bot is an asyncio library; we use its ``Bot`` as a client only. One event
loop per process runs in a daemon thread, and ``run`` hands it a coroutine and waits for
the result, so the client's HTTP connection pool lives on one loop and is reused across
calls and worker threads (``asyncio.run`` per call would build a new loop and pool each
time). A forked child gets its own loop.
"""
import asyncio
import os
import threading

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_pid: int | None = None


def loop() -> asyncio.AbstractEventLoop:
    global _loop, _pid
    with _lock:
        if _loop is None or _pid != os.getpid() or _loop.is_closed():
            new = asyncio.new_event_loop()
            threading.Thread(target=new.run_forever, name="bridge-aio", daemon=True).start()
            _loop, _pid = new, os.getpid()
        return _loop


def run(coro, timeout: float = 60.0):
    """Run ``coro`` on the bridge loop and return its result (or raise its exception)."""
    future = asyncio.run_coroutine_threadsafe(coro, loop())
    try:
        return future.result(timeout)
    except TimeoutError:
        future.cancel()
        raise
