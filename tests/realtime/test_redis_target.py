"""Tests move this process from one embedded Redis to the next; a port (and so a URL) comes round again."""
from config.celery import app
from tests.redis_target import point_at


def test_a_url_pointed_at_again_after_its_pool_was_closed_gets_a_working_pool(settings):
    previous = settings.REDIS_URL
    try:
        point_at("redis://127.0.0.1:6390/0")
        first = app.pool
        point_at("redis://127.0.0.1:6391/0")  # closes the first server's pool, as a stack's teardown does
        point_at("redis://127.0.0.1:6390/0")
        assert app.pool is not first
        connection = app.pool.acquire(block=False)  # a closed pool raises "Acquire on closed pool"
        connection.release()
        producers = app.amqp.producer_pool
        assert producers.connections is app.pool
    finally:
        point_at(previous)
