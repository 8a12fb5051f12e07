"""Fewer indexes for the rows every engine step writes (an observation, its events and the model call's
invocation), without losing any lookup:

- Observations and room events lose their own index on ``room_id``: each table's unique ``(room, seq)``
  begins with that column and serves every lookup by room.
- An observation's ``turn`` and ``responding_to`` are indexed only where set: a discussion's turns and
  decisions have neither, yet each was written into both indexes.
- Invocations are indexed by ``(room, correlation_id)`` and, where a person's action wrote them, by user, instead
  of by room, user and correlation apart: every lookup by correlation is within a room, and a model call the
  engine makes has no user.

- PostgreSQL: the GIN index of observations' ``search_vector`` (rooms 0015) keeps only the rows that have one
  (typed workspace observations); a discussion's turns, whose vector is NULL, were entered in it too. A search's
  ``search_vector @@ query`` can use it (the operator is strict: it implies the vector is not NULL).

A step wrote one B-tree page per index it touched; these save five of the twenty or so each step commits.
The indexes Django gave the fields are dropped by name (with the ``_like`` twin PostgreSQL keeps for a character
column) rather than by altering the fields: SQLite alters a field by rebuilding its table, which would also drop
the triggers that keep the workspace search index current for observations (rooms 0010).
"""
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

FIELD_INDEXES = [  # (index, table, column): the names Django gave them, the same on SQLite and PostgreSQL
    ("rooms_observation_room_id_cf895380", "rooms_observation", "room_id"),
    ("rooms_observation_turn_id_ae6f8ce8", "rooms_observation", "turn_id"),
    ("rooms_observation_responding_to_id_566b6c64", "rooms_observation", "responding_to_id"),
    ("rooms_roomevent_room_id_5f543141", "rooms_roomevent", "room_id"),
    ("rooms_invocation_room_id_95fc5e2e", "rooms_invocation", "room_id"),
    ("rooms_invocation_user_id_402128e2", "rooms_invocation", "user_id"),
    ("rooms_invocation_correlation_id_7037cdb0", "rooms_invocation", "correlation_id"),
]
CHARACTER_COLUMNS = {"rooms_invocation_correlation_id_7037cdb0"}  # PostgreSQL also gave these a ``_like`` index


def drop_field_indexes(apps, schema_editor):
    for index, _, _ in FIELD_INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {index}")
        if index in CHARACTER_COLUMNS and schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"DROP INDEX IF EXISTS {index}_like")


def create_field_indexes(apps, schema_editor):
    for index, table, column in FIELD_INDEXES:
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {index} ON {table} ({column})")
        if index in CHARACTER_COLUMNS and schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {index}_like ON {table} ({column} varchar_pattern_ops)")


SEARCH_INDEX = "CREATE INDEX IF NOT EXISTS observation_search_vector ON rooms_observation USING gin (search_vector)"


def search_index_partial(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS observation_search_vector")
        schema_editor.execute(SEARCH_INDEX + " WHERE search_vector IS NOT NULL")


def search_index_whole(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS observation_search_vector")
        schema_editor.execute(SEARCH_INDEX)


def _fk(to, on_delete, related_name, **extra):
    return models.ForeignKey(db_index=False, on_delete=on_delete, related_name=related_name, to=to, **extra)


class Migration(migrations.Migration):
    dependencies = [
        ("rooms", "0021_task_version"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The new indexes first, so that no lookup is ever without one.
        migrations.AddIndex(
            model_name="invocation", index=models.Index(fields=["room", "correlation_id"], name="invocation_room_correlation"),
        ),
        migrations.AddIndex(
            model_name="invocation",
            index=models.Index(condition=models.Q(("user__isnull", False)), fields=["user"], name="invocation_user"),
        ),
        migrations.AddIndex(
            model_name="observation",
            index=models.Index(condition=models.Q(("turn__isnull", False)), fields=["turn"], name="observation_turn"),
        ),
        migrations.AddIndex(
            model_name="observation",
            index=models.Index(condition=models.Q(("responding_to__isnull", False)), fields=["responding_to"],
                               name="observation_responding_to"),
        ),
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(drop_field_indexes, create_field_indexes),
                                 migrations.RunPython(search_index_partial, search_index_whole)],
            state_operations=[
                migrations.AlterField(model_name="invocation", name="correlation_id",
                                      field=models.CharField(blank=True, max_length=64)),
                migrations.AlterField(model_name="invocation", name="room",
                                      field=_fk("rooms.room", django.db.models.deletion.CASCADE, "invocations", blank=True, null=True)),
                migrations.AlterField(model_name="invocation", name="user",
                                      field=_fk(settings.AUTH_USER_MODEL, django.db.models.deletion.SET_NULL, "+", blank=True, null=True)),
                migrations.AlterField(model_name="observation", name="room",
                                      field=_fk("rooms.room", django.db.models.deletion.CASCADE, "observations")),
                migrations.AlterField(model_name="observation", name="turn",
                                      field=_fk("rooms.turn", django.db.models.deletion.SET_NULL, "observations", blank=True, null=True)),
                migrations.AlterField(model_name="observation", name="responding_to",
                                      field=_fk("rooms.observation", django.db.models.deletion.SET_NULL, "responses", blank=True, null=True)),
                migrations.AlterField(model_name="roomevent", name="room",
                                      field=_fk("rooms.room", django.db.models.deletion.CASCADE, "events")),
            ],
        ),
    ]
