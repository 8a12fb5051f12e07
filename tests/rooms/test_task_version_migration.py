"""Tasks got a ``version`` (rooms 0021). SQLite adds the column by rebuilding the task table, which drops the
triggers that keep the workspace search current for tasks: the migration creates them again, both ways."""
import pytest
from django.db import connection

TRIGGERS = {"workspace_search_task_ins", "workspace_search_task_upd", "workspace_search_task_del"}


def task_triggers() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'rooms_taskassignment'")
        return {name for (name,) in cursor.fetchall()}


@pytest.mark.skipif(connection.vendor != "sqlite", reason="only SQLite rebuilds the table to add the column")
def test_the_task_search_triggers_survive_the_version_column_both_ways(transactional_db):
    from django.db.migrations.executor import MigrationExecutor

    from facilitation.workspace.actions.tasks import do_create_task, do_update_task
    from facilitation.workspace.search import search_room
    from tests.factories import make_user
    from tests.workspace.helpers import make_workspace

    assert task_triggers() == TRIGGERS
    executor = MigrationExecutor(connection)
    try:
        executor.migrate([("rooms", "0020_derive_empty_agent_aliases")])
        assert task_triggers() == TRIGGERS
    finally:  # whatever happens, the later tests find the schema migrated to the end
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert task_triggers() == TRIGGERS
    owner = make_user("indexer")
    room = make_workspace(owner)
    task = do_create_task(room, owner, title="Design the outbox table")
    assert [t["id"] for t in search_room(room.pk, "outbox").data["tasks"]] == [task.pk]
    do_update_task(room, task.pk, owner, title="Plan the cut-over", version=task.version)
    assert search_room(room.pk, "outbox").data["tasks"] == []
    assert [t["id"] for t in search_room(room.pk, "cut-over").data["tasks"]] == [task.pk]
