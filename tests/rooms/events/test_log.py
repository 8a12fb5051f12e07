"""rooms.events.log: events written together go in one INSERT, in order, pushed after the commit."""
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from rooms.events import EventType, build, record_event, written_together
from rooms.models import RoomEvent
from tests.factories import make_discussion, make_user


def inserts(queries) -> int:
    return sum(1 for q in queries if q["sql"].startswith('INSERT INTO "rooms_roomevent"'))


@pytest.mark.django_db(transaction=True)
def test_events_written_together_take_one_insert_and_keep_their_order(pushed):
    room = make_discussion(make_user())
    already, first = len(pushed), room.seq + 1
    with transaction.atomic(), CaptureQueriesContext(connection) as seen:
        with written_together():
            record_event(room, EventType.STATUS, build.status(room))
            with written_together():  # an inner block joins the outer one
                record_event(room, EventType.STATUS, build.status(room))
            record_event(room, EventType.STATUS, build.status(room))
            assert len(pushed) == already and inserts(seen.captured_queries) == 0
    assert inserts(seen.captured_queries) == 1
    rows = list(RoomEvent.objects.filter(room=room, seq__gte=first).order_by("seq"))
    assert [r.seq for r in rows] == [first, first + 1, first + 2]
    assert [p["seq"] for _, p, _ in pushed[already:]] == [first, first + 1, first + 2]  # once committed, in order


@pytest.mark.django_db(transaction=True)
def test_a_failure_inside_the_block_writes_and_pushes_nothing(pushed):
    room = make_discussion(make_user())
    stored, already = RoomEvent.objects.filter(room=room).count(), len(pushed)
    with pytest.raises(RuntimeError), transaction.atomic():
        with written_together():
            record_event(room, EventType.STATUS, build.status(room))
            raise RuntimeError
    assert RoomEvent.objects.filter(room=room).count() == stored and len(pushed) == already
