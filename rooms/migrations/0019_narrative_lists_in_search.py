"""Workspace search covers a narrative's key decisions and next steps, not only its text
(facilitation.workspace.search).

SQLite: the narrative entries of the FTS5 table ``workspace_search`` (rowid id * 4 + 3, see rooms 0010)
hold the text, then each key decision and next step (the items of the JSON lists, read with
``json_each`` so that escaped characters count as themselves); the triggers follow edits of any of the
three, and the entries written before are rebuilt.

PostgreSQL: the GIN expression index on narratives covers the same three columns, on the expression
``SearchVector("content", "key_decisions", "next_steps", config="english")`` compiles to.
"""
from django.db import migrations

NARRATIVE_BODY = ("{row}.content || ' ' || COALESCE((SELECT group_concat(value, ' ') FROM json_each({row}.key_decisions)), '')"
                  " || ' ' || COALESCE((SELECT group_concat(value, ' ') FROM json_each({row}.next_steps)), '')")


def _sqlite(body: str, columns: str) -> list[str]:
    """The narrative triggers indexing ``body`` (of NEW), updated on ``columns``, and every entry rebuilt."""
    return [
        "DROP TRIGGER IF EXISTS workspace_search_narr_ins",
        "DROP TRIGGER IF EXISTS workspace_search_narr_upd",
        f"""CREATE TRIGGER workspace_search_narr_ins AFTER INSERT ON rooms_narrative BEGIN
             INSERT INTO workspace_search(rowid, body, room) VALUES (NEW.id * 4 + 3, {body.format(row="NEW")}, 'r' || NEW.room_id);
           END""",
        f"""CREATE TRIGGER workspace_search_narr_upd AFTER UPDATE OF {columns} ON rooms_narrative BEGIN
             DELETE FROM workspace_search WHERE rowid = OLD.id * 4 + 3;
             INSERT INTO workspace_search(rowid, body, room) VALUES (NEW.id * 4 + 3, {body.format(row="NEW")}, 'r' || NEW.room_id);
           END""",
        "DELETE FROM workspace_search WHERE rowid IN (SELECT id * 4 + 3 FROM rooms_narrative)",
        f"""INSERT INTO workspace_search(rowid, body, room)
              SELECT n.id * 4 + 3, {body.format(row="n")}, 'r' || n.room_id FROM rooms_narrative n""",
    ]


SQLITE_UP = _sqlite(NARRATIVE_BODY, "content, key_decisions, next_steps")
SQLITE_DOWN = _sqlite("{row}.content", "content")
POSTGRES_UP = [
    "DROP INDEX IF EXISTS narrative_content_fts",
    """CREATE INDEX IF NOT EXISTS narrative_text_fts ON rooms_narrative
         USING gin (to_tsvector('english'::regconfig, COALESCE(content, '') || ' ' || COALESCE((key_decisions)::text, '')
                                || ' ' || COALESCE((next_steps)::text, '')))""",
]
POSTGRES_DOWN = [
    "DROP INDEX IF EXISTS narrative_text_fts",
    """CREATE INDEX IF NOT EXISTS narrative_content_fts ON rooms_narrative
         USING gin (to_tsvector('english'::regconfig, COALESCE(content, '')))""",
]


def _run(statements: dict):
    def run(apps, schema_editor):
        for sql in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql)
    return run


class Migration(migrations.Migration):
    dependencies = [("rooms", "0018_clamp_room_budget_usd")]

    operations = [
        migrations.RunPython(_run({"sqlite": SQLITE_UP, "postgresql": POSTGRES_UP}),
                             _run({"sqlite": SQLITE_DOWN, "postgresql": POSTGRES_DOWN})),
    ]
