"""PostgreSQL: workspace observations carry their ``tsvector`` in a stored generated column.

Ranking with ``ts_rank(to_tsvector(content), query)`` parsed every matching row's text again at
each search, and the planner preferred a sequential scan that parsed every row of the table (about
0.4 s per search over 10,000 observations). The stored column ``search_vector`` is computed once,
when an observation is written, for typed (workspace) observations only; NULL for a discussion's
turns, so the engine's writes pay nothing. Its GIN index replaces the expression index of 0010.
``facilitation.workspace.search`` queries it with raw SQL (the column is not a model field).

SQLite is unchanged: its FTS5 table (0010) serves the same search.
"""
from django.db import migrations

POSTGRES_UP = [
    """ALTER TABLE rooms_observation ADD COLUMN IF NOT EXISTS search_vector tsvector GENERATED ALWAYS AS
         (CASE WHEN event_type <> '' THEN to_tsvector('english'::regconfig, COALESCE(content, '')) END) STORED""",
    "CREATE INDEX IF NOT EXISTS observation_search_vector ON rooms_observation USING gin (search_vector)",
    "DROP INDEX IF EXISTS observation_content_fts",
]
POSTGRES_DOWN = [
    """CREATE INDEX IF NOT EXISTS observation_content_fts ON rooms_observation
         USING gin (to_tsvector('english'::regconfig, COALESCE(content, '')))""",
    "DROP INDEX IF EXISTS observation_search_vector",
    "ALTER TABLE rooms_observation DROP COLUMN IF EXISTS search_vector",
]


def _run(statements: list[str]):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for sql in statements:
                schema_editor.execute(sql)
    return run


class Migration(migrations.Migration):
    dependencies = [("rooms", "0014_seat_role_background")]

    operations = [migrations.RunPython(_run(POSTGRES_UP), _run(POSTGRES_DOWN))]
