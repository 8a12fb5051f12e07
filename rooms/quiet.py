"""Whether anybody wrote a room's SQLite database since this thread's last step of the room.

A room's steps run one after another in one thread when a worker carries a room on or the in-process
driver runs it, each on the thread's one connection. Between two of them the step reads what it
already knows: the room as the commit before left it, and its seats as the step before read them.
SQLite tells cheaply whether that knowledge still holds:

- ``PRAGMA data_version`` changes when another connection (another thread or process) commits;
- the connection's ``total_changes`` moves with every row this connection itself writes.

So a *mark* (the connection, its ``data_version``, its ``total_changes``) taken twice and found equal
means nobody wrote anything in between. A step marks the database at its claim (``claimed``); its
commit, holding the write lock (``BEGIN IMMEDIATE``), checks that nothing moved since
(``unchanged_since_claim``) instead of reading the room's marks; and once the commit is in, the mark
it leaves (``committing``) lets the room's next step here know, at its claim, that the database is
exactly as this commit left it (``steady``): no room or seat read is needed then.

Every other case (another database, another transaction mode, a different connection, any write in
between, a step whose commit found something moved) answers "not known", and the step reads as usual.
"""
import threading

from django.db import DatabaseError, transaction

from rooms import statements


class _Marks(threading.local):
    def __init__(self):
        #: (alias, room id) -> the mark the room's last commit in this thread left.
        self.committed: dict[tuple, tuple] = {}
        #: (alias, room id) -> (the mark at the current step's claim, whether it equals the last commit's).
        self.claimed: dict[tuple, tuple] = {}
        #: (alias, room id) -> the data version a commit in progress found unchanged since its claim.
        self.checked: dict[tuple, int] = {}


_marks = _Marks()
#: Rooms remembered per thread (the least recently claimed are dropped).
KEEP_ROOMS = 256


def _usable(db) -> bool:
    return (db.vendor == "sqlite" and db.connection is not None
            and (db.settings_dict.get("OPTIONS") or {}).get("transaction_mode") == "IMMEDIATE")


def _mark(db) -> tuple:
    raw = db.connection
    version = statements.fetch(db, "PRAGMA data_version", [])[0][0]
    return raw, version, raw.total_changes


def _kept(marks: dict, key: tuple, mark) -> None:
    """``marks[key] = mark``, dropping the oldest rooms beyond ``KEEP_ROOMS``."""
    marks[key] = mark
    while len(marks) > KEEP_ROOMS:
        marks.pop(next(iter(marks)))


def _same(a: tuple, b: tuple) -> bool:
    return a[0] is b[0] and a[1] == b[1] and a[2] == b[2]


def claimed(db, room_id: int) -> bool:
    """At a step's claim (outside a transaction of the step's own): mark the database. True when it is exactly
    as the room's last commit in this thread left it."""
    key = (db.alias, room_id)
    before = _marks.committed.pop(key, None)
    _marks.checked.pop(key, None)
    if not _usable(db):
        _marks.claimed.pop(key, None)
        return False
    try:
        now = _mark(db)
    except DatabaseError:  # not known: the claim reads the room (and rides out an outage) as usual
        _marks.claimed.pop(key, None)
        return False
    steady = before is not None and _same(before, now)
    _kept(_marks.claimed, key, (now, steady))
    return steady


def steady(db, room_id: int) -> bool:
    """Between a step's claim and the end of its planning (``planned``): was the database, at the claim, as the
    room's last commit in this thread left it? (Nothing else runs in the thread in between.)"""
    got = _marks.claimed.get((db.alias, room_id))
    return bool(got and got[1])


def planned(db, room_id: int) -> None:
    """The step has read what it plans from (or will not run): ``steady`` says no from now on. The claim's
    mark stays for the commit's check."""
    key = (db.alias, room_id)
    got = _marks.claimed.get(key)
    if got is not None and got[1]:
        _marks.claimed[key] = (got[0], False)


def unchanged_since_claim(db, room_id: int) -> bool:
    """Inside the step's commit, after its transaction began: nobody wrote anything since the step's claim."""
    key = (db.alias, room_id)
    got = _marks.claimed.get(key)
    if got is None or not db.in_atomic_block or not _usable(db):
        return False
    now = _mark(db)
    if not _same(got[0], now):
        return False
    _marks.checked[key] = now[1]
    return True


def committing(db, room_id: int) -> None:
    """Inside the step's commit, once everything is written: when the commit found nothing moved since its claim,
    the mark it leaves is kept for the room's next step here, from the moment it commits."""
    key = (db.alias, room_id)
    version = _marks.checked.pop(key, None)
    if version is None or db.connection is None:
        return
    left = (db.connection, version, db.connection.total_changes)

    transaction.on_commit(lambda: _kept(_marks.committed, key, left), using=db.alias)


def forget_all() -> None:
    """Drop this thread's marks (the tests, between databases)."""
    _marks.committed.clear()
    _marks.claimed.clear()
    _marks.checked.clear()
