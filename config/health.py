"""GET /healthz: database, Redis and worker liveness as JSON."""
import time

from django.conf import settings
from django.db import connection
from django.http import JsonResponse


def _database() -> dict:
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT 1")
        return {"ok": True, "vendor": connection.vendor}
    except Exception as exc:
        return {"ok": False, "error": str(exc)}


def _redis() -> dict:
    import redis

    try:
        started = time.monotonic()
        redis.Redis.from_url(settings.REDIS_URL, socket_timeout=1, socket_connect_timeout=1).ping()
        return {"ok": True, "latencyMs": round((time.monotonic() - started) * 1000, 2)}
    except Exception as exc:
        return {"ok": False, "error": str(exc)}


def _workers(redis_ok: bool) -> dict:
    if not redis_ok:
        return {"ok": False, "count": 0, "error": "Redis is not reachable"}
    from config.celery import app

    try:
        replies = app.control.inspect(timeout=1.0).ping() or {}
    except Exception as exc:
        return {"ok": False, "count": 0, "error": str(exc)}
    return {"ok": bool(replies), "count": len(replies), "names": sorted(replies)}


def healthz(request):
    db = _database()
    rd = _redis()
    workers = _workers(rd["ok"])
    ok = db["ok"] and rd["ok"] and workers["ok"]
    return JsonResponse({"ok": ok, "database": db, "redis": rd, "workers": workers}, status=200 if ok else 503)
