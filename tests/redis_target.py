"""Pointing the test process at another embedded Redis.

The suite starts many embedded Redis servers in one process, one after the other; Celery caches
the broker connection pool it made for the first URL, so moving on means dropping that cache.
Celery has no public call for it: this stays in the tests (production processes pick their Redis
once, before they send anything: ``config.runtime.send_through``)."""
from kombu import pools

from config.celery import app
from config.runtime import send_through


def _forget(pool) -> None:
    """Drop a closed connection pool, and the producer pool drawing on it, from kombu's registries: they are
    kept per URL, so a later server on the same port (ports are reused) would be handed the closed pool."""
    for group in (pools.connections, pools.producers):
        for key, value in list(group.items()):
            if value is pool or getattr(value, "connections", None) is pool:
                dict.__delitem__(group, key)


def point_at(url: str, *, close_old: bool = True) -> None:
    """Send through ``url`` from now on. ``close_old``: close the previous pool's connections (not
    for a server other tests go on using: a closed pool stays closed) and forget it."""
    if close_old and app._pool is not None:
        app._pool.force_close_all()
        _forget(app._pool)
    app._pool = None
    app.amqp._producer_pool = None
    send_through(url)
