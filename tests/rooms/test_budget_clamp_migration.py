"""A USD budget larger than its column was storable on SQLite and broke every read of the room: the
migration 0018 clamps it to the largest budget."""
from decimal import Decimal

import pytest
from django.db import connection

from rooms.models import Room
from tests.factories import make_discussion, make_user


@pytest.mark.skipif(connection.vendor != "sqlite", reason="only SQLite stores a number too large for numeric(12, 6)")
def test_a_budget_too_large_for_its_column_is_clamped(transactional_db):
    from django.db.migrations.executor import MigrationExecutor

    room = make_discussion(make_user("bigspender"))
    other = make_discussion(make_user("thrifty"))
    Room.objects.filter(pk=other.pk).update(budget_usd=Decimal("12.5"))
    executor = MigrationExecutor(connection)
    executor.migrate([("rooms", "0017_room_pause_reason")])
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"UPDATE {Room._meta.db_table} SET budget_usd = 1000000 WHERE id = %s", [room.pk])
    finally:  # whatever happens, the later tests find the schema migrated to the end
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert Room.objects.get(pk=room.pk).budget_usd == Decimal("999999.99")
    assert Room.objects.get(pk=other.pk).budget_usd == Decimal("12.5")
