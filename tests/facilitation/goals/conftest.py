import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _rate_limit_counters_start_at_zero():
    """Runs are created by users whose ids repeat after each rollback or flush; the per-user counters (in the
    cache) would carry over from test to test and throttle a later one."""
    cache.clear()
    yield
    cache.clear()
