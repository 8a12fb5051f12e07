"""Tasks carry a ``version``: every change adds one, and an edit names the version it was made on (as a
narrative's does), so that of two tabs editing one task the second is told instead of overwriting the first.

SQLite adds a NOT NULL column by rebuilding ``rooms_taskassignment``, which drops the triggers that keep the
workspace search index current for tasks (rooms 0010): they are created again after the column comes, and
after it goes when the migration is reversed.
"""
from django.db import migrations, models

TASK_TRIGGERS = [
    """CREATE TRIGGER IF NOT EXISTS workspace_search_task_ins AFTER INSERT ON rooms_taskassignment BEGIN
         INSERT INTO workspace_search(rowid, body, room)
           VALUES (NEW.id * 4 + 2, NEW.title || ' ' || NEW.description, 'r' || NEW.room_id);
       END""",
    """CREATE TRIGGER IF NOT EXISTS workspace_search_task_upd AFTER UPDATE OF title, description ON rooms_taskassignment BEGIN
         DELETE FROM workspace_search WHERE rowid = OLD.id * 4 + 2;
         INSERT INTO workspace_search(rowid, body, room)
           VALUES (NEW.id * 4 + 2, NEW.title || ' ' || NEW.description, 'r' || NEW.room_id);
       END""",
    """CREATE TRIGGER IF NOT EXISTS workspace_search_task_del AFTER DELETE ON rooms_taskassignment BEGIN
         DELETE FROM workspace_search WHERE rowid = OLD.id * 4 + 2;
       END""",
]


def task_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for sql in TASK_TRIGGERS:
            schema_editor.execute(sql)


class Migration(migrations.Migration):

    dependencies = [
        ('rooms', '0020_derive_empty_agent_aliases'),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, task_triggers),
        migrations.AddField(
            model_name='taskassignment',
            name='version',
            field=models.PositiveIntegerField(default=1),
        ),
        migrations.RunPython(task_triggers, migrations.RunPython.noop),
    ]
