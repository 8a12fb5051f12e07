"""Django's SQLite backend, with the threads of one process taking turns at writing.

SQLite lets one writer at a time through. A transaction that finds the write lock taken waits in
SQLite's busy handler, which sleeps in growing steps (1, 2, 5 ... 100 ms) and retries; with many
worker threads writing short transactions, a waiter keeps waking up after someone else took the lock
and can wait half a second or more while the others go through. Here the threads of one process
queue on a lock of their own before ``BEGIN IMMEDIATE`` and are woken the moment the writer before
them commits; other processes (the web server, a second worker) still meet at SQLite's own lock.

The wait for the process's lock is bounded by the connection's ``timeout``: after it the
transaction goes ahead and SQLite's own locking decides, so a thread can never wait forever here.

Comparisons without case (``iexact``, ``icontains``, ``istartswith``, ``iendswith``) fold both sides with
Python's ``str.casefold``: SQLite's own ``LIKE`` and ``UPPER`` fold ASCII letters only, so ``über`` would not
find ``Über`` (nor ``ελληνικά`` ``Ελληνικά``) as it does on PostgreSQL.

The cursor also remembers how it rewrote a statement's ``%s`` placeholders into SQLite's ``?``: the
engine sends the same few statements at every step, and the rewrite (a regular expression over the
whole text) cost more than some of the statements.
"""
import threading
from functools import lru_cache

from django.db.backends.sqlite3 import base
from django.db.backends.sqlite3 import operations

#: The SQL function that folds text for comparing without case (registered on every connection).
FOLD = "convene_fold"
_CASELESS = ("iexact", "icontains", "istartswith", "iendswith")

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _writer_lock(name: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(name, threading.Lock())


@lru_cache(maxsize=1024)
def _qmark(query: str) -> str:
    return base.FORMAT_QMARK_REGEX.sub("?", query).replace("%%", "%")


def _fold(value):
    return value.casefold() if isinstance(value, str) else value


class DatabaseOperations(operations.DatabaseOperations):
    def lookup_cast(self, lookup_type, internal_type=None):
        if lookup_type in _CASELESS:
            return f"{FOLD}(%s)"
        return super().lookup_cast(lookup_type, internal_type)


class CursorWrapper(base.SQLiteCursorWrapper):
    def convert_query(self, query, *, param_names=None):
        if param_names is None and len(query) <= 8192:
            return _qmark(query)
        return super().convert_query(query, param_names=param_names)


class DatabaseWrapper(base.DatabaseWrapper):
    _holds_writer = None  # the process lock this connection took for its transaction
    ops_class = DatabaseOperations
    operators = {**base.DatabaseWrapper.operators, **{lookup: f"LIKE {FOLD}(%s) ESCAPE '\\'" for lookup in _CASELESS}}
    pattern_ops = {
        **base.DatabaseWrapper.pattern_ops,
        "icontains": rf"LIKE '%%' || {FOLD}({{}}) || '%%' ESCAPE '\'",
        "istartswith": rf"LIKE {FOLD}({{}}) || '%%' ESCAPE '\'",
        "iendswith": rf"LIKE '%%' || {FOLD}({{}}) ESCAPE '\'",
    }

    def get_new_connection(self, conn_params):
        conn = super().get_new_connection(conn_params)
        conn.create_function(FOLD, 1, _fold, deterministic=True)
        return conn

    def create_cursor(self, name=None):
        return self.connection.cursor(factory=CursorWrapper)

    def _start_transaction_under_autocommit(self):
        lock = _writer_lock(str(self.settings_dict["NAME"]))
        if lock.acquire(timeout=float(self.settings_dict.get("OPTIONS", {}).get("timeout", 5))):
            self._holds_writer = lock
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._release_writer()
            raise

    def _release_writer(self):
        lock, self._holds_writer = self._holds_writer, None
        if lock is not None:
            lock.release()

    def _commit(self):
        try:
            return super()._commit()
        finally:
            self._release_writer()

    def _rollback(self):
        try:
            return super()._rollback()
        finally:
            self._release_writer()

    def _close(self):
        try:
            return super()._close()
        finally:
            self._release_writer()
