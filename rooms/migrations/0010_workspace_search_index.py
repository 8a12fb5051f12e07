"""Full-text indexes for workspace search (facilitation.workspace.search).

SQLite: one FTS5 table over observations, tasks and narratives, kept current by triggers.
Its rowid encodes the source row (id * 4 + kind: 1 observation, 2 task, 3 narrative) so an
update or delete touches one entry; the ``room`` column ("r<id>") lets a query intersect with
one room's entries inside the index.

PostgreSQL: GIN indexes on the same ``to_tsvector('english', ...)`` expressions the search
queries use (``SearchVector``), so the planner answers from the index.
"""
from django.db import migrations

SQLITE_UP = [
    "CREATE VIRTUAL TABLE workspace_search USING fts5(body, room, tokenize='porter unicode61')",
    # observations (typed ones only: workspace rooms)
    """CREATE TRIGGER workspace_search_obs_ins AFTER INSERT ON rooms_observation WHEN NEW.event_type <> '' BEGIN
         INSERT INTO workspace_search(rowid, body, room) VALUES (NEW.id * 4 + 1, NEW.content, 'r' || NEW.room_id);
       END""",
    """CREATE TRIGGER workspace_search_obs_upd AFTER UPDATE OF content, event_type ON rooms_observation BEGIN
         DELETE FROM workspace_search WHERE rowid = OLD.id * 4 + 1;
         INSERT INTO workspace_search(rowid, body, room) SELECT NEW.id * 4 + 1, NEW.content, 'r' || NEW.room_id
           WHERE NEW.event_type <> '';
       END""",
    """CREATE TRIGGER workspace_search_obs_del AFTER DELETE ON rooms_observation BEGIN
         DELETE FROM workspace_search WHERE rowid = OLD.id * 4 + 1;
       END""",
    # tasks
    """CREATE TRIGGER workspace_search_task_ins AFTER INSERT ON rooms_taskassignment BEGIN
         INSERT INTO workspace_search(rowid, body, room)
           VALUES (NEW.id * 4 + 2, NEW.title || ' ' || NEW.description, 'r' || NEW.room_id);
       END""",
    """CREATE TRIGGER workspace_search_task_upd AFTER UPDATE OF title, description ON rooms_taskassignment BEGIN
         DELETE FROM workspace_search WHERE rowid = OLD.id * 4 + 2;
         INSERT INTO workspace_search(rowid, body, room)
           VALUES (NEW.id * 4 + 2, NEW.title || ' ' || NEW.description, 'r' || NEW.room_id);
       END""",
    """CREATE TRIGGER workspace_search_task_del AFTER DELETE ON rooms_taskassignment BEGIN
         DELETE FROM workspace_search WHERE rowid = OLD.id * 4 + 2;
       END""",
    # narratives
    """CREATE TRIGGER workspace_search_narr_ins AFTER INSERT ON rooms_narrative BEGIN
         INSERT INTO workspace_search(rowid, body, room) VALUES (NEW.id * 4 + 3, NEW.content, 'r' || NEW.room_id);
       END""",
    """CREATE TRIGGER workspace_search_narr_upd AFTER UPDATE OF content ON rooms_narrative BEGIN
         DELETE FROM workspace_search WHERE rowid = OLD.id * 4 + 3;
         INSERT INTO workspace_search(rowid, body, room) VALUES (NEW.id * 4 + 3, NEW.content, 'r' || NEW.room_id);
       END""",
    """CREATE TRIGGER workspace_search_narr_del AFTER DELETE ON rooms_narrative BEGIN
         DELETE FROM workspace_search WHERE rowid = OLD.id * 4 + 3;
       END""",
    # rows written before this migration
    """INSERT INTO workspace_search(rowid, body, room)
         SELECT id * 4 + 1, content, 'r' || room_id FROM rooms_observation WHERE event_type <> ''""",
    """INSERT INTO workspace_search(rowid, body, room)
         SELECT id * 4 + 2, title || ' ' || description, 'r' || room_id FROM rooms_taskassignment""",
    """INSERT INTO workspace_search(rowid, body, room) SELECT id * 4 + 3, content, 'r' || room_id FROM rooms_narrative""",
]
SQLITE_DOWN = [
    *(f"DROP TRIGGER IF EXISTS workspace_search_{t}_{op}" for t in ("obs", "task", "narr") for op in ("ins", "upd", "del")),
    "DROP TABLE IF EXISTS workspace_search",
]
# Must equal what django.contrib.postgres.search.SearchVector(..., config="english") compiles to.
POSTGRES_UP = [
    """CREATE INDEX IF NOT EXISTS observation_content_fts ON rooms_observation
         USING gin (to_tsvector('english'::regconfig, COALESCE(content, '')))""",
    """CREATE INDEX IF NOT EXISTS task_text_fts ON rooms_taskassignment
         USING gin (to_tsvector('english'::regconfig, COALESCE(title, '') || ' ' || COALESCE(description, '')))""",
    """CREATE INDEX IF NOT EXISTS narrative_content_fts ON rooms_narrative
         USING gin (to_tsvector('english'::regconfig, COALESCE(content, '')))""",
]
POSTGRES_DOWN = [
    "DROP INDEX IF EXISTS observation_content_fts",
    "DROP INDEX IF EXISTS task_text_fts",
    "DROP INDEX IF EXISTS narrative_content_fts",
]


def _run(statements: dict):
    def run(apps, schema_editor):
        for sql in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql)
    return run


class Migration(migrations.Migration):
    dependencies = [("rooms", "0009_workspace_rooms")]

    operations = [
        migrations.RunPython(_run({"sqlite": SQLITE_UP, "postgresql": POSTGRES_UP}),
                             _run({"sqlite": SQLITE_DOWN, "postgresql": POSTGRES_DOWN})),
    ]
