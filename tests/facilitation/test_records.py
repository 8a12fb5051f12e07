"""facilitation.records: the rows a step replays are carried to the room's next step, and the result is
always what a fresh read of the table gives."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from facilitation import records
from rooms.events import next_seq
from rooms.models import Observation, Room
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


def _add(room: Room, content: str, kind=Observation.Kind.CONTRIBUTION, data=None) -> Observation:
    """An observation written the way every writer writes one: the room's next seq, then the row."""
    seq = next_seq(room)
    return Observation.objects.create(room=room, seq=seq, round=1, author_name="Ada", kind=kind, content=content,
                                      markers=[{"type": "vote", "value": "READY", "line": 0}], data=data or {})


def _fresh(room_id: int) -> list[dict]:
    """What an uncarried read gives: the latest rows from the table, oldest first."""
    return list(reversed(list(Observation.objects.filter(room_id=room_id, kind__in=("contribution", "decision"))
                              .order_by("-seq").values(*records._FIELDS)[:records.REPLAY_LIMIT * 2])))


def _reread(room: Room) -> Room:
    return Room.objects.get(pk=room.pk)  # as a step's claim reads it


def _observation_reads(queries) -> list[str]:
    return [q["sql"] for q in queries if 'FROM "rooms_observation"' in q["sql"]]


def test_the_next_step_reads_only_the_rows_after_the_carried_ones():
    room = make_discussion(make_user())
    for n in range(4):
        _add(room, f"turn {n}")
    first = records.rows_of(_reread(room))
    assert [r["content"] for r in first] == [f"turn {n}" for n in range(4)]
    _add(room, "turn 4")
    _add(room, "next?", kind=Observation.Kind.DECISION, data={"decision": "continue", "nextParticipantId": 1})
    room = _reread(room)
    with CaptureQueriesContext(connection) as seen:
        second = records.rows_of(room)
    assert second == _fresh(room.pk)
    reads = _observation_reads(seen.captured_queries)
    assert len(reads) == 1 and '"seq" >' in reads[0]  # only what is new
    assert [r["seq"] for r in second][-2:] == [room.seq - 1, room.seq]


def test_rows_written_after_the_room_was_read_are_shown_but_not_carried():
    room = make_discussion(make_user())
    _add(room, "one")
    as_read = _reread(room)
    _add(room, "two")  # a person's turn commits between the claim and the context read
    got = records.rows_of(as_read)
    assert [r["content"] for r in got] == ["one", "two"]
    key = (as_read._state.db, as_read.pk)
    assert records._carried[key].upto == as_read.seq and len(records._carried[key].rows) == 1
    room = _reread(room)
    assert records.rows_of(room) == _fresh(room.pk)  # "two" is read again, once


def test_a_room_created_again_under_the_same_key_is_read_whole():
    room = make_discussion(make_user())
    _add(room, "old room")
    records.rows_of(_reread(room))
    other = _reread(room)
    other.created_at = other.created_at.replace(year=other.created_at.year - 1)
    with CaptureQueriesContext(connection) as seen:
        records.rows_of(other)
    assert '"seq" >' not in _observation_reads(seen.captured_queries)[0]


def test_a_carry_ahead_of_the_room_is_not_trusted():
    room = make_discussion(make_user())
    _add(room, "one")
    records.rows_of(_reread(room))
    behind = _reread(room)
    behind.seq -= 1  # a room read before the carried one (another thread's older read)
    with CaptureQueriesContext(connection) as seen:
        got = records.rows_of(behind)
    assert got == _fresh(room.pk) and '"seq" >' not in _observation_reads(seen.captured_queries)[0]


def test_a_long_room_is_not_carried(monkeypatch):
    monkeypatch.setattr(records, "CARRY_ROWS", 3)
    room = make_discussion(make_user())
    for n in range(4):
        _add(room, f"turn {n}")
    room = _reread(room)
    assert records.rows_of(room) == _fresh(room.pk)
    assert (room._state.db, room.pk) not in records._carried


def test_many_new_rows_are_read_whole(monkeypatch):
    monkeypatch.setattr(records, "CARRY_ROWS", 3)
    room = make_discussion(make_user())
    _add(room, "first")
    records.rows_of(_reread(room))
    for n in range(5):
        _add(room, f"later {n}")
    room = _reread(room)
    assert records.rows_of(room) == _fresh(room.pk)


def test_only_so_many_rooms_are_carried(monkeypatch):
    monkeypatch.setattr(records, "CARRY_ROOMS", 2)
    owner = make_user()
    rooms = [make_discussion(owner) for _ in range(3)]
    for room in rooms:
        _add(room, "hello")
        records.rows_of(_reread(room))
    assert [key[1] for key in records._carried] == [rooms[1].pk, rooms[2].pk]


def _whole_discussion(room: Room, before_each_step) -> None:
    """Run the discussion step by step; ``before_each_step(room as its step's claim reads it)``."""
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.runs.leases import current
    from facilitation.runs.runner import run_step
    from facilitation.runs.scheduling import inline

    with inline():
        do_start_discussion(room.pk)
        for _ in range(40):
            step = current(room.pk)
            claimed = _reread(room)
            if claimed.status != Room.Status.ACTIVE:
                break
            before_each_step(claimed)
            assert run_step(room.pk, step.step_seq).outcome == "committed"
    assert _reread(room).status == Room.Status.CONCLUDED


def test_a_whole_discussion_replays_the_same_with_and_without_the_carry():
    """The engine's context for every step equals the one built from a fresh read."""
    from facilitation.context import load_context

    def compare(claimed):
        carried = load_context(claimed)
        records.forget_all()
        fresh = load_context(claimed)
        assert (carried.turns, carried.summaries, carried.room.items) == (fresh.turns, fresh.summaries, fresh.room.items)

    _whole_discussion(make_discussion(make_user(), max_rounds=4), compare)


@pytest.mark.django_db(transaction=True)  # the carry moves on when the step's commit really commits
def test_a_step_commit_carries_its_own_rows_so_the_next_step_reads_nothing():
    room = make_discussion(make_user(), max_rounds=3)
    reads = []

    def check(claimed):
        with CaptureQueriesContext(connection) as seen:
            got = records.rows_of(claimed)
        assert got == _fresh(room.pk)
        reads.append(len(_observation_reads(seen.captured_queries)))

    _whole_discussion(room, check)
    assert [r["kind"] for r in _fresh(room.pk)].count("contribution") == 3
    # Opening, three turns, three evaluations, synthesis: only the first read found nothing carried;
    # every commit after it carried its own rows on.
    assert reads == [1] + [0] * 7


@pytest.mark.django_db(transaction=True)
def test_a_row_another_writer_added_before_the_commit_is_read_not_assumed():
    from django.db import transaction

    room = make_discussion(make_user())
    _add(room, "one")
    records.rows_of(_reread(room))  # the step's read: carried up to "one"
    _add(room, "a person's turn")  # commits while the step's model call runs
    with transaction.atomic():
        locked = _reread(room)
        before = locked.seq
        mine = _add(locked, "the step's turn")
        records.wrote(locked, before, [records.row_of(mine)])
    room = _reread(room)
    with CaptureQueriesContext(connection) as seen:
        got = records.rows_of(room)
    assert [r["content"] for r in got] == ["one", "a person's turn", "the step's turn"]
    assert got == _fresh(room.pk)
    assert len(_observation_reads(seen.captured_queries)) == 1


@pytest.mark.django_db(transaction=True)
def test_rows_of_a_commit_that_rolled_back_are_not_carried():
    from django.db import transaction

    room = make_discussion(make_user())
    _add(room, "one")
    records.rows_of(_reread(room))
    with pytest.raises(RuntimeError), transaction.atomic():
        locked = _reread(room)
        before = locked.seq
        mine = _add(locked, "never committed")
        records.wrote(locked, before, [records.row_of(mine)])
        raise RuntimeError("the commit failed")
    key = (room._state.db, room.pk)
    assert [r["content"] for r in records._carried[key].rows] == ["one"]
    assert records.rows_of(_reread(room)) == _fresh(room.pk)
