"""Agents left with an empty alias (made before aliases were never empty) get one from the migration 0020:
derived from the name, ``agent`` when the name leaves nothing, numbered past their owner's and the built-ins'."""
from django.db import connection

from rooms.models import Agent
from tests.factories import make_user


def test_empty_aliases_are_derived_per_owner(transactional_db):
    from django.db.migrations.executor import MigrationExecutor

    ana, ben = make_user("ana-empty"), make_user("ben-empty")
    Agent.objects.create(name="Builtin agent", alias="agent", is_builtin=True)
    Agent.objects.create(name="Cache person", alias="cache", created_by=ana)
    rows = {key: Agent.objects.create(name=name, alias=f"x-{key}", created_by=owner) for key, name, owner in (
        ("kanji", "日本語", ana), ("bangs", "!!!", ana), ("cache", "Cache", ana), ("other", "日本語", ben))}
    for key in ("chair", "chair-too"):  # two built-ins of one name (the built-ins' aliases are unique in the database)
        rows[key] = Agent.objects.create(name="Test Chair", alias=f"x-{key}", is_builtin=True)
    Agent.objects.filter(pk__in=[a.pk for a in rows.values()]).update(alias="")
    executor = MigrationExecutor(connection)
    executor.migrate([("rooms", "0019_narrative_lists_in_search")])
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    got = {key: Agent.objects.get(pk=a.pk).alias for key, a in rows.items()}
    assert got == {"kanji": "agent-2", "bangs": "agent-3", "cache": "cache-2", "other": "agent-2",
                   "chair": "test-chair", "chair-too": "test-chair-2"}
    assert not Agent.objects.filter(alias="").exists()
