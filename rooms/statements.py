"""Running the engine's fixed statements: what Django's cursor does for them, without its wrapper per call.

A step sends about ten short statements whose SQL is built once (``rooms.rows``, ``rooms.prepared``,
``rooms.usage``, ``facilitation.runs.leases``). Through ``connection.cursor()`` each one pays for the
connection proxy's lookup, a cursor wrapper built and closed, and the async and thread checks, which
together cost more than SQLite's own work for such a statement (about 9 us against 3 us here).

On SQLite, ``fetch`` and ``write`` keep what matters of that path: the connection is opened if need be,
a transaction marked for rollback refuses further statements, the thread check holds, and database
errors come out as Django's (``OperationalError`` and the rest: ``runs.outages`` rides them out).
Whenever something watches the statements (``connection.queries_logged``: ``DEBUG``, a test counting
queries; or an execute wrapper), and on other databases, they go through Django's cursor as any query.
"""
from asyncio import _get_running_loop
from datetime import datetime, timezone
from functools import lru_cache
from threading import get_ident
from typing import Callable

from django.db.backends.sqlite3.base import FORMAT_QMARK_REGEX


@lru_cache(maxsize=512)
def _qmark(sql: str) -> str:
    """SQLite's placeholders for Django's ``%s`` (what its SQLite cursor does to every statement)."""
    return FORMAT_QMARK_REGEX.sub("?", sql).replace("%%", "%")


def _direct(connection) -> bool:
    return connection.vendor == "sqlite" and not connection.queries_logged and not connection.execute_wrappers


def _raw_cursor(connection):
    raw = connection.connection
    if (raw is not None and _get_running_loop() is None and connection._thread_ident == get_ident()
            and not connection.needs_rollback and (connection.health_check_done or not connection.health_check_enabled)):
        # Open, in its own thread, outside an event loop, in no broken transaction, no health check due: what the
        # calls below would find, checked directly (they stay the path for every other case, and raise as usual).
        return raw.cursor()
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    connection.validate_thread_sharing()
    connection.validate_no_broken_transaction()
    return connection.connection.cursor()


def _run(connection, sql: str, params: list, result: Callable):
    """Run ``sql`` on ``connection`` (a wrapper, not the proxy) and return ``result(cursor)``."""
    if not _direct(connection):
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return result(cursor)
    with connection.wrap_database_errors:
        cursor = _raw_cursor(connection)
        try:
            cursor.execute(_qmark(sql), params)
            return result(cursor)
        finally:
            cursor.close()


def fetch(connection, sql: str, params: list) -> list[tuple]:
    """Every row ``sql`` returns (a SELECT, or a write with RETURNING)."""
    return _run(connection, sql, params, lambda cursor: cursor.fetchall())


def write(connection, sql: str, params: list) -> int:
    """Run an INSERT, UPDATE or DELETE; the number of rows it changed."""
    return _run(connection, sql, params, lambda cursor: cursor.rowcount)


def at(connection, value: datetime | None):
    """A date-time as ``connection`` takes it as a parameter (``ops.adapt_datetimefield_value``). An aware UTC
    one on SQLite with the connection in UTC (how every step's stamps are written) is its text directly:
    what the backend's checks and conversions come to for it, at a fraction of their cost."""
    if value is not None and value.tzinfo is timezone.utc and connection.vendor == "sqlite" and connection.timezone is timezone.utc:
        return value.isoformat(" ")[:-6]  # str() of it without its "+00:00"
    return connection.ops.adapt_datetimefield_value(value)
