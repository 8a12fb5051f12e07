"""Pointing the test process at another embedded Redis.

The suite starts many embedded Redis servers in one process, one after the other; Celery caches
the broker connection pool it made for the first URL, so moving on means dropping that cache.
Celery has no public call for it: this stays in the tests (production processes pick their Redis
once, before they send anything: ``config.runtime.send_through``)."""
from config.celery import app
from config.runtime import send_through


def point_at(url: str, *, close_old: bool = True) -> None:
    """Send through ``url`` from now on. ``close_old``: close the previous pool's connections (not
    for a server other tests go on using: kombu keeps one pool per URL, and a closed one stays closed)."""
    if close_old and app._pool is not None:
        app._pool.force_close_all()
    app._pool = None
    app.amqp._producer_pool = None
    send_through(url)
