"""One lifecycle table: the REST routes, PATCH {status}, the socket controls and the page read it."""
import pytest
from django.urls import reverse

from facilitation.actions import lifecycle
from rooms.errors import StateConflict
from rooms.events import Command
from rooms.models import Room
from tests.factories import make_discussion, make_user

S = Room.Status


def test_every_verb_has_its_action_and_a_route():
    assert lifecycle.ACTIONS.keys() == lifecycle.TRANSITIONS.keys()
    for verb in lifecycle.TRANSITIONS:
        assert reverse(f"api-discussion-{verb}", kwargs={"id": 1}) == f"/api/discussions/1/{verb}"


def test_socket_controls_are_the_contract_commands():
    commands = {t.command for t in lifecycle.TRANSITIONS.values() if t.command}
    assert commands == {Command.PAUSE, Command.RESUME, Command.STOP, Command.CONCLUDE}


def test_registered_socket_handlers_follow_the_table():
    import socketio

    from facilitation.sockets import register

    sio = socketio.AsyncServer(async_mode="asgi")
    register(sio)
    handlers = set(sio.handlers["/"])
    assert {c.value for c in (Command.PAUSE, Command.RESUME, Command.STOP, Command.CONCLUDE)} <= handlers
    assert "discussion:start" not in handlers


@pytest.mark.parametrize("target, current, verb", [
    (S.ACTIVE, S.DRAFT, "start"), (S.ACTIVE, S.PAUSED, "resume"), (S.PAUSED, S.ACTIVE, "pause"),
    (S.STOPPED, S.ACTIVE, "stop"), (S.STOPPED, S.PAUSED, "stop"), (S.CONCLUDED, S.ACTIVE, "conclude"),
    (S.CONCLUDED, S.PAUSED, "conclude"), (S.PAUSED, S.DRAFT, None), (S.ACTIVE, S.STOPPED, None),
    (S.DRAFT, S.ACTIVE, None), (S.CONCLUDED, S.DRAFT, None),
])
def test_verb_for_a_target_status(target, current, verb):
    assert lifecycle.verb_for(target, current) == verb


def test_verbs_by_status_drive_the_buttons():
    assert lifecycle.verbs_by_status() == {
        "draft": ["start"], "active": ["pause", "stop", "conclude"], "paused": ["resume", "stop", "conclude"],
        "concluded": [], "stopped": ["conclude"], "failed": [], "completed": [], "archived": [],
    }


@pytest.mark.django_db
def test_run_dispatches_and_refuses_what_the_table_forbids():
    from facilitation.runs.scheduling import inline

    room = make_discussion(make_user())
    with pytest.raises(StateConflict):
        lifecycle.run("pause", room)
    with inline():
        assert lifecycle.run("start", room).status == S.ACTIVE
    assert lifecycle.run("pause", room).status == S.PAUSED
    with pytest.raises(KeyError):
        lifecycle.run("explode", room)


@pytest.mark.django_db
def test_each_lifecycle_change_writes_its_status_event_with_the_seq_it_saves_on_the_room():
    from facilitation.runs.scheduling import inline
    from rooms.models import RoomEvent

    room = make_discussion(make_user("lifecycle-seq"))
    with inline():
        lifecycle.do_start_discussion(room.pk)
        lifecycle.do_pause_discussion(room.pk)
        lifecycle.do_resume_discussion(room.pk)
    events = list(RoomEvent.objects.filter(room_id=room.pk, type="discussion:status").order_by("seq"))
    assert [e.payload["status"] for e in events][-3:] == ["active", "paused", "active"]
    assert [e.payload["seq"] for e in events] == [e.seq for e in events]
    assert Room.objects.get(pk=room.pk).seq == max(RoomEvent.objects.filter(room_id=room.pk).values_list("seq", flat=True))
