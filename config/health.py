"""GET /healthz: is every component this deployment needs working? 200 when all are, else 503.

Components: the database (reachable), its schema (every migration applied), Redis, at
least one Celery worker, and the chat bridges (each configured or not, with the time of its
last update and last message sent; an unconfigured bridge is not a failure). Anyone sees ``ok`` per component; staff (signed in, or with an API
token) also see the details: database vendor, latencies, worker names, what to run.
"""
import time

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.http import JsonResponse

from channels_bridge.health import bridges_status
from config.bootstrap import pending_migrations

# Once every migration is applied in this process's lifetime it stays so (new migrations come
# with new code, hence a new process): the migration graph is loaded until then only.
_schema_seen_current = False


def _database() -> dict:
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT 1")
        return {"ok": True, "vendor": connection.vendor}
    except Exception as exc:
        return {"ok": False, "error": str(exc)}


def _schema(database_ok: bool) -> dict:
    global _schema_seen_current
    if not database_ok:
        return {"ok": False, "error": "The database is not reachable."}
    if _schema_seen_current:
        return {"ok": True}
    try:
        pending = pending_migrations()
    except Exception as exc:
        return {"ok": False, "error": str(exc)}
    if pending:
        return {"ok": False, "pending": len(pending),
                "error": f"{len(pending)} migration(s) not applied: run `python manage.py migrate`."}
    _schema_seen_current = True
    return {"ok": True}


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
        return {"ok": False, "count": 0, "error": "Redis is not reachable."}
    from config.celery import app

    try:
        replies = app.control.inspect(timeout=1.0).ping() or {}
    except Exception as exc:
        return {"ok": False, "count": 0, "error": str(exc)}
    if not replies:
        return {"ok": False, "count": 0, "error": "No Celery worker answers: start one (python manage.py serve starts one)."}
    return {"ok": True, "count": len(replies), "names": sorted(replies)}


def _is_staff(request) -> bool:
    """Signed in as staff, or ``Authorization: Token <key>`` of a staff user (for monitors)."""
    try:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            return user.is_active and user.is_staff
        keyword, _, key = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
        if keyword.lower() != "token" or not key.strip():
            return False
        from rooms.tokens import user_for_key

        token_user = user_for_key(key.strip())
        return bool(token_user is not None and token_user.is_staff)
    except Exception:  # no session or token table yet (schema not migrated): nobody is staff
        return False


def healthz(request):
    components = {"database": _database()}
    components["schema"] = _schema(components["database"]["ok"])
    components["redis"] = _redis()
    components["workers"] = _workers(components["redis"]["ok"])
    components["bridges"] = bridges_status() if components["database"]["ok"] else {"ok": True}
    ok = all(c["ok"] for c in components.values())
    if _is_staff(request):
        body = {"ok": ok, **components}
    else:
        body = {"ok": ok, **{name: {"ok": c["ok"]} for name, c in components.items()}}
    return JsonResponse(body, status=200 if ok else 503)
