"""Counting attempts per key in fixed windows, in Django's cache (shared between processes
when ``CONVENE_CACHE_URL`` points at Redis; per process otherwise).

Used for sign-in failures, bad API tokens, writes and socket events. A cache that fails lets requests
through (logged): rate limits must never take the site down.
"""
import logging
import time

from django.conf import settings
from django.core.cache import cache

log = logging.getLogger("convene.ratelimit")


def _slot(scope: str, key, window: int) -> tuple[str, int]:
    now = time.time()
    index = int(now // window)
    return f"rl:{scope}:{key}:{index}", int((index + 1) * window - now) + 1


def count(scope: str, key, window: int) -> int:
    try:
        return int(cache.get(_slot(scope, key, window)[0]) or 0)
    except Exception:
        log.warning("rate-limit cache unavailable", exc_info=True)
        return 0


def hit(scope: str, key, window: int) -> int:
    """Count one attempt; return the count in the current window."""
    name, _ = _slot(scope, key, window)
    try:
        if cache.add(name, 1, timeout=window + 1):
            return 1
        return int(cache.incr(name))
    except ValueError:  # expired between add and incr
        cache.add(name, 1, timeout=window + 1)
        return 1
    except Exception:
        log.warning("rate-limit cache unavailable", exc_info=True)
        return 0


def hit_over(scope: str, key, limit_name: str) -> int:
    """Count one attempt of ``key`` against the limit ``limit_name`` (``rate``): the seconds until its window ends
    (and its count starts again) when that attempt went over the limit, else 0."""
    limit, window = rate(limit_name)
    if hit(scope, key, window) > limit:
        return _slot(scope, key, window)[1]
    return 0


def wait_if_over(scope: str, key, limit: int, window: int) -> int:
    """Seconds until ``key`` may try again when it reached ``limit`` in this window, else 0."""
    if count(scope, key, window) >= limit:
        return _slot(scope, key, window)[1]
    return 0


def rate(name: str) -> tuple[int, int]:
    """A limit from ``settings.CONVENE_RATE_LIMITS``: (attempts, window in seconds)."""
    return tuple(settings.CONVENE_RATE_LIMITS[name])


def client_ip(meta: dict) -> str:
    """The caller's address; behind a trusted proxy, the address it saw (last X-Forwarded-For entry)."""
    if getattr(settings, "SECURE_PROXY_SSL_HEADER", None):
        forwarded = [part.strip() for part in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if forwarded:
            return forwarded[-1]
    return meta.get("REMOTE_ADDR") or "unknown"
