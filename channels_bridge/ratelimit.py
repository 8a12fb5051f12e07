"""Token buckets shared by every worker (Redis), pacing what the bot sends.

``take(keys)`` asks several buckets at once (e.g. the chat's, the group's and the global
one) and either takes a token from each or none, answering how long to wait. A platform's
``retry_after`` is honoured with ``block(key, seconds)``: the bucket gives nothing until then.
"""
import threading
import time

from django.conf import settings

# KEYS: bucket keys; ARGV: now (ms), then (burst, rate per second) per key.
# Each bucket is a hash {tokens, ts}; "blocked:<key>" holds a deadline set by block().
_TAKE = """
local now = tonumber(ARGV[1])
local wait = 0
local state = {}
for i, key in ipairs(KEYS) do
  local burst = tonumber(ARGV[2 * i])
  local rate = tonumber(ARGV[2 * i + 1])
  local blocked = tonumber(redis.call('GET', 'blocked:' .. key) or '0')
  if blocked > now then wait = math.max(wait, blocked - now) end
  local data = redis.call('HMGET', key, 'tokens', 'ts')
  local tokens = tonumber(data[1]) or burst
  local ts = tonumber(data[2]) or now
  tokens = math.min(burst, tokens + (now - ts) / 1000.0 * rate)
  if tokens < 1 then wait = math.max(wait, math.ceil((1 - tokens) / rate * 1000)) end
  state[i] = tokens
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[2 * i + 1])
  local burst = tonumber(ARGV[2 * i])
  redis.call('HSET', key, 'tokens', state[i] - 1, 'ts', now)
  redis.call('PEXPIRE', key, math.ceil(burst / rate * 1000) + 60000)
end
return 0
"""


def limits() -> dict:
    return settings.BRIDGES["RATE_LIMITS"]


class RedisBuckets:
    def __init__(self, url: str):
        import redis

        self.client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self.script = self.client.register_script(_TAKE)

    def take(self, buckets: list[tuple[str, int, float]]) -> float:
        args = [int(time.time() * 1000)]
        for _, burst, rate in buckets:
            args += [burst, rate]
        wait_ms = self.script(keys=[f"convene:bucket:{k}" for k, _, _ in buckets], args=args)
        return int(wait_ms) / 1000.0

    def block(self, key: str, seconds: float) -> None:
        deadline = int((time.time() + seconds) * 1000)
        self.client.set(f"blocked:convene:bucket:{key}", deadline, px=int(seconds * 1000) + 1000)


class MemoryBuckets:
    """The same arithmetic in one process (unit tests, no Redis)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._state: dict[str, tuple[float, float]] = {}
        self._blocked: dict[str, float] = {}

    def take(self, buckets: list[tuple[str, int, float]]) -> float:
        now = time.time()
        with self._lock:
            wait, fresh = 0.0, {}
            for key, burst, rate in buckets:
                wait = max(wait, self._blocked.get(key, 0) - now)
                tokens, ts = self._state.get(key, (burst, now))
                tokens = min(burst, tokens + (now - ts) * rate)
                if tokens < 1:
                    wait = max(wait, (1 - tokens) / rate)
                fresh[key] = tokens
            if wait > 0:
                return wait
            for key, tokens in fresh.items():
                self._state[key] = (tokens - 1, now)
            return 0.0

    def block(self, key: str, seconds: float) -> None:
        with self._lock:
            self._blocked[key] = time.time() + seconds


_memory = MemoryBuckets()
_redis: dict[str, RedisBuckets] = {}
_redis_lock = threading.Lock()


def buckets():
    if settings.BRIDGES.get("RATE_LIMIT_BACKEND", "redis") == "memory":
        return _memory
    url = settings.REDIS_URL
    with _redis_lock:
        if url not in _redis:
            _redis[url] = RedisBuckets(url)
        return _redis[url]


def reset_memory() -> None:
    global _memory
    _memory = MemoryBuckets()


def bucket(name: str, key: str) -> tuple[str, int, float]:
    burst, rate = limits()[name]
    return (f"{name}:{key}", burst, rate)
