"""The rows every engine step writes carry only the indexes their lookups use (rooms 0022, facilitation 0004), and
every lookup the project makes of them still finds an index; a step's commit rewrites the room's status (an indexed
column) only when it ends the room."""
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from facilitation.actions import lifecycle
from facilitation.runs import leases, scheduling
from facilitation.runs.models import StepLease
from facilitation.runs.runner import run_step
from rooms.models import Invocation, Observation, Room, RoomEvent
from tests.factories import make_discussion, make_user

LOOKUPS = {
    "a room's observations": lambda: Observation.objects.filter(room_id=1),
    "a room's observations after a seq": lambda: Observation.objects.filter(room_id=1, seq__gt=5),
    "a turn's observations (Turn deleted: SET NULL)": lambda: Observation.objects.filter(turn_id__in=[1, 2]),
    "the answers to an observation": lambda: Observation.objects.filter(responding_to_id__in=[1]),
    "a room's events after a seq (replay)": lambda: RoomEvent.objects.filter(room_id=1, seq__gt=5),
    "a room's invocations": lambda: Invocation.objects.filter(room_id=1, component="narrative.generate"),
    "a round's calls by correlation": lambda: Invocation.objects.filter(room_id=1, correlation_id="abc"),
    "a user's invocations (user deleted: SET NULL)": lambda: Invocation.objects.filter(user_id__in=[1, 2]),
    "a room's step leases": lambda: StepLease.objects.filter(room_id=1),
    "a workspace round's typed observations": lambda: Observation.objects.filter(room_id=1, round=2).exclude(event_type=""),
}


def _plan(queryset) -> str:
    if connection.vendor == "postgresql":
        with transaction.atomic():  # the planner's choice on an empty table says nothing: forbid a scan of it
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL enable_seqscan = off")
            return queryset.explain()
    return queryset.explain()


@pytest.mark.django_db
@pytest.mark.parametrize("lookup", list(LOOKUPS))
def test_each_lookup_of_a_steps_rows_finds_an_index(lookup):
    plan = _plan(LOOKUPS[lookup]())
    assert "index" in plan.lower(), plan


def _constraints(table: str) -> dict:
    with connection.cursor() as cursor:
        return connection.introspection.get_constraints(cursor, table)


@pytest.mark.django_db
def test_an_engine_row_lands_in_no_index_on_a_column_it_leaves_empty():
    """The indexes a discussion's rows would fill with nothing useful are partial or gone."""
    columns = {
        "rooms_observation": {"turn_id", "responding_to_id"},
        "rooms_invocation": {"user_id", "correlation_id"},
    }
    for table, empty in columns.items():
        for name, info in _constraints(table).items():
            if info["index"] and not info.get("unique") and set(info["columns"]) & empty:
                assert name in {"observation_turn", "observation_responding_to", "invocation_user",
                                "invocation_room_correlation"}, (table, name, info["columns"])
    # No index of its own for a foreign key that begins a unique index.
    for table in ("rooms_observation", "rooms_roomevent", "facilitation_steplease", "rooms_invocation"):
        alone = [name for name, info in _constraints(table).items()
                 if info["index"] and not info["unique"] and info["columns"] == ["room_id"]]
        assert alone == [], (table, alone)


@pytest.fixture
def scripted(settings):
    settings.CONVENE = {**settings.CONVENE, "DEFAULT_PROVIDER": "scripted"}


@pytest.mark.django_db(transaction=True)
def test_a_steps_commit_sets_the_rooms_status_only_when_it_ends_the_room(scripted):
    room = make_discussion(make_user(), max_rounds=2)
    with scheduling.inline():
        lifecycle.do_start_discussion(room.pk)
    seq = leases.current(room.pk).step_seq
    commits = []
    with scheduling.driving():
        while True:
            with CaptureQueriesContext(connection) as queries:
                result = run_step(room.pk, seq)
            assert result.outcome == "committed"
            commits += [(result.step, q["sql"]) for q in queries.captured_queries
                        if q["sql"].startswith('UPDATE "rooms_room" SET "engine_state"')]
            seq += 1
            if result.step == "synthesis":
                break
    assert [step for step, _ in commits][-1] == "synthesis" and len(commits) >= 4
    *running, (_, ending) = commits
    assert all('"status"' not in sql for _, sql in running), running
    assert '"status"' in ending and '"ended_at"' in ending and '"conclusion"' in ending
    room = Room.objects.get(pk=room.pk)
    assert room.status == Room.Status.CONCLUDED and room.ended_at is not None and room.conclusion


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the stored search vector is PostgreSQL's")
@pytest.mark.django_db
def test_a_workspace_search_finds_the_partial_search_index():
    """Only rows with a vector are in it, and a match on the vector (what a search asks) can still use it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'observation_search_vector'")
        assert "WHERE (search_vector IS NOT NULL)" in cursor.fetchone()[0]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")  # not the room's index: the search index or nothing
        cursor.execute("EXPLAIN SELECT id FROM rooms_observation WHERE search_vector @@ to_tsquery('english', %s)", ["cache"])
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "observation_search_vector" in plan, plan


def _index_definition(name: str) -> str:
    query = ("SELECT indexdef FROM pg_indexes WHERE indexname = %s" if connection.vendor == "postgresql"
             else "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = %s")
    with connection.cursor() as cursor:
        cursor.execute(query, [name])
        row = cursor.fetchone()
    assert row, name
    return row[0]


@pytest.mark.django_db
def test_the_index_by_type_holds_typed_observations_only():
    """A discussion's observations have no type: they stay out of the index by (room, type) (rooms 0024)."""
    definition = _index_definition("observation_room_typed")
    assert "WHERE" in definition.upper() and "event_type" in definition.split("WHERE", 1)[-1], definition


@pytest.mark.django_db
def test_the_sweeper_finds_stranded_leases_through_an_index_and_the_lease_time_has_none():
    """Every step sets ``lease_until``: it is in no index (facilitation 0005), and the sweeper's lookup of
    expired leases goes through the active rooms' index instead of scanning every lease."""
    assert not any("lease_until" in info["columns"] for info in _constraints("facilitation_steplease").values() if info["index"])
    with CaptureQueriesContext(connection) as seen:
        leases.stranded(30)
    sql = seen.captured_queries[0]["sql"]
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("EXPLAIN " + sql)
        else:
            cursor.execute("EXPLAIN QUERY PLAN " + sql)
        plan = "\n".join(str(row[-1]) for row in cursor.fetchall())
    assert "facilitation_steplease" in plan and "Seq Scan" not in plan and "SCAN facilitation_steplease" not in plan, plan
