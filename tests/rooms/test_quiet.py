"""rooms.quiet: a room's next step here knows the database is as its commit left it only while nobody, on this
connection or any other, wrote anything since."""
import threading

import pytest
from django.db import connection, connections, transaction

from rooms import quiet
from rooms.models import Room
from tests.factories import make_discussion, make_user

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's data_version and total_changes")]


def _commit_step(room: Room) -> None:
    """What a step's commit does: check nothing moved since the claim, write, leave its mark."""
    with transaction.atomic():
        assert quiet.unchanged_since_claim(connection, room.pk)
        Room.objects.filter(pk=room.pk).update(round=1)
        quiet.committing(connection, room.pk)


def _claimed_after_a_commit(room: Room) -> None:
    quiet.claimed(connection, room.pk)
    _commit_step(room)


def test_the_next_claim_finds_the_database_as_the_commit_left_it():
    room = make_discussion(make_user())
    _claimed_after_a_commit(room)
    assert quiet.claimed(connection, room.pk) is True
    assert quiet.steady(connection, room.pk)
    quiet.planned(connection, room.pk)
    assert not quiet.steady(connection, room.pk)  # only until the step has planned


def test_a_write_on_the_same_connection_in_between_is_seen():
    room = make_discussion(make_user())
    _claimed_after_a_commit(room)
    Room.objects.filter(pk=room.pk).update(topic="changed in between")
    assert quiet.claimed(connection, room.pk) is False


def test_a_write_from_another_connection_in_between_is_seen():
    room = make_discussion(make_user())
    _claimed_after_a_commit(room)

    def elsewhere():
        try:
            Room.objects.filter(pk=room.pk).update(topic="changed by another thread")
        finally:
            connections.close_all()

    worker = threading.Thread(target=elsewhere)
    worker.start()
    worker.join()
    assert Room.objects.get(pk=room.pk).topic == "changed by another thread"
    assert quiet.claimed(connection, room.pk) is False


def test_a_commit_does_not_skip_its_check_after_a_write_since_the_claim():
    room = make_discussion(make_user())
    quiet.claimed(connection, room.pk)
    Room.objects.filter(pk=room.pk).update(topic="written after the claim")
    with transaction.atomic():
        assert quiet.unchanged_since_claim(connection, room.pk) is False
        quiet.committing(connection, room.pk)
    assert quiet.claimed(connection, room.pk) is False  # nothing was left to go on from


def test_a_commit_that_rolls_back_leaves_no_mark():
    room = make_discussion(make_user())
    quiet.claimed(connection, room.pk)
    with pytest.raises(RuntimeError), transaction.atomic():
        assert quiet.unchanged_since_claim(connection, room.pk)
        quiet.committing(connection, room.pk)
        raise RuntimeError("the commit failed")
    assert quiet.claimed(connection, room.pk) is False
