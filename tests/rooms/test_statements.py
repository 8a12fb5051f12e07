"""rooms.statements: the engine's fixed statements run as Django's cursor would run them."""
import asyncio
import threading
from datetime import datetime, timezone as dt_timezone
from zoneinfo import ZoneInfo

import pytest
from django.db import DatabaseError, IntegrityError, connection, connections, transaction
from django.core.exceptions import SynchronousOnlyOperation
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext

from rooms import statements
from rooms.models import Room
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db

DB = connections["default"]
SELECT = 'SELECT "id", "name", "seq" FROM "rooms_room" WHERE "id" = %s'
RENAME = 'UPDATE "rooms_room" SET "name" = %s WHERE "id" = %s'


def test_fetch_and_write_give_what_djangos_cursor_gives():
    room = make_discussion(make_user())
    Room.objects.filter(pk=room.pk).update(name="100% sure")
    assert statements.fetch(DB, SELECT, [room.pk]) == [(room.pk, "100% sure", room.seq)]
    assert statements.fetch(DB, SELECT, [room.pk + 1000]) == []
    assert statements.write(DB, RENAME, ["renamed", room.pk]) == 1
    assert statements.write(DB, RENAME, ["nobody", room.pk + 1000]) == 0
    assert Room.objects.get(pk=room.pk).name == "renamed"
    # A literal percent sign in the SQL itself, escaped as Django expects it.
    assert statements.fetch(DB, "SELECT '50%%' || %s", ["!"]) == [("50%!",)]


def test_on_sqlite_without_watchers_django_cursor_wrapper_is_not_built(monkeypatch):
    if DB.vendor != "sqlite":
        pytest.skip("the direct path is SQLite's")
    room = make_discussion(make_user())

    def no_wrapper(*args, **kwargs):
        raise AssertionError("went through connection.cursor()")

    monkeypatch.setattr(type(DB), "cursor", no_wrapper)
    assert statements.fetch(DB, SELECT, [room.pk])[0][0] == room.pk


def test_statements_are_counted_where_queries_are_watched():
    room = make_discussion(make_user())
    with CaptureQueriesContext(connection) as seen:
        statements.fetch(DB, SELECT, [room.pk])
        statements.write(DB, RENAME, ["watched", room.pk])
    assert [q["sql"].split()[0] for q in seen.captured_queries] == ["SELECT", "UPDATE"]
    assert str(room.pk) in seen.captured_queries[0]["sql"]


def test_database_errors_come_out_as_djangos():
    with pytest.raises(DatabaseError) as raised, transaction.atomic():
        statements.fetch(DB, 'SELECT "nothing" FROM "no_such_table" WHERE "id" = %s', [1])
    assert type(raised.value).__module__ == "django.db.utils"  # OperationalError on SQLite, ProgrammingError on PostgreSQL
    room = make_discussion(make_user())
    other = make_discussion(make_user("bob"))
    with pytest.raises(IntegrityError):  # (room, seq) of an event is unique
        with transaction.atomic():
            sql = 'INSERT INTO "rooms_roomevent" ("room_id", "seq", "type", "payload", "created_at") VALUES (%s, %s, %s, %s, %s)'
            for _ in range(2):
                statements.write(DB, sql, [room.pk, 999, "x", "{}", "2026-01-01 00:00:00"])
    assert statements.fetch(DB, SELECT, [other.pk])  # the connection is still usable


def test_a_transaction_marked_for_rollback_refuses_further_statements():
    room = make_discussion(make_user())
    with transaction.atomic():
        try:
            with transaction.atomic():
                statements.fetch(DB, 'SELECT "nothing" FROM "no_such_table" WHERE "id" = %s', [1])
        except DatabaseError:
            pass
        transaction.set_rollback(True)
        with pytest.raises(TransactionManagementError):
            statements.write(DB, RENAME, ["too late", room.pk])
    assert Room.objects.get(pk=room.pk).name != "too late"


@pytest.mark.parametrize("value", [
    datetime(2026, 12, 7, 3, 4, 5, 123456, tzinfo=dt_timezone.utc),
    datetime(2026, 12, 7, 3, 4, 5, tzinfo=dt_timezone.utc),  # no microseconds: none written, as Django writes it
    datetime(2026, 12, 7, 3, 4, 5, 9, tzinfo=ZoneInfo("Europe/Berlin")),
    None,
])
def test_a_date_time_parameter_is_what_the_backend_makes_of_it(value):
    assert statements.at(connection, value) == connection.ops.adapt_datetimefield_value(value)


def test_a_stamp_written_as_text_reads_back_as_the_same_instant():
    room = make_discussion(make_user())
    stamp = datetime(2026, 12, 7, 3, 4, 5, 120000, tzinfo=dt_timezone.utc)
    table, column = connection.ops.quote_name(Room._meta.db_table), connection.ops.quote_name("updated_at")
    statements.write(connection, f"UPDATE {table} SET {column} = %s WHERE id = %s", [statements.at(connection, stamp), room.pk])
    assert Room.objects.get(pk=room.pk).updated_at == stamp


def test_a_statement_from_inside_an_event_loop_is_refused_as_djangos_are(monkeypatch):
    monkeypatch.delenv("DJANGO_ALLOW_ASYNC_UNSAFE", raising=False)  # the browser tests allow it for the whole session
    room = make_discussion(make_user())
    statements.fetch(DB, SELECT, [room.pk])  # the connection is open: the refusal is not the connect's

    async def from_the_loop():
        return statements.fetch(DB, SELECT, [room.pk])

    with pytest.raises(SynchronousOnlyOperation):
        asyncio.run(from_the_loop())


def test_a_statement_on_another_threads_connection_is_refused_as_djangos_are():
    room = make_discussion(make_user())
    statements.fetch(DB, SELECT, [room.pk])
    failed = []
    worker = threading.Thread(target=lambda: _catch(failed, lambda: statements.fetch(DB, SELECT, [room.pk])))
    worker.start()
    worker.join()
    assert len(failed) == 1 and isinstance(failed[0], DatabaseError) and "thread" in str(failed[0])


def _catch(into: list, run) -> None:
    try:
        run()
    except Exception as error:  # the test reads what was raised
        into.append(error)
