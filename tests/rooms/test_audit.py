"""rooms.audit: one Invocation per write, with a correlation id shared inside ``correlation()``."""
from decimal import Decimal

import pytest
from django.db import transaction

from rooms.actions import catalog
from rooms.actions.rooms import do_change_moderator, do_delete_room, do_share_room, do_unshare_room, do_update_room
from rooms.audit import audit, correlation, current_correlation_id
from rooms.errors import StateConflict, ValidationFailed
from rooms.models import Invocation, Room, RoomMember
from tests.factories import make_discussion, make_facilitator, make_user

pytestmark = pytest.mark.django_db


def actions_of(**filters):
    return list(Invocation.objects.filter(kind=Invocation.Kind.ACTION, **filters).order_by("id"))


def test_audit_writes_an_action_row_with_json_snapshots_and_a_fresh_id():
    user = make_user()
    room = make_discussion(user)
    row = audit(room, user, "room.test", before={"budget": Decimal("1.5"), "who": user}, after={"ids": (1, 2)})
    row.refresh_from_db()
    assert row.kind == "action" and row.user == user and row.room == room and row.component == "room.test"
    assert row.input == {"before": {"budget": "1.5", "who": user.pk}, "after": {"ids": [1, 2]}}
    other = audit(None, None, "room.test")
    assert other.correlation_id and other.correlation_id != row.correlation_id and other.input == {}


def test_a_correlation_block_gives_its_rows_one_id_and_nests():
    assert current_correlation_id() is None
    with correlation() as outer:
        first = audit(None, None, "a.one")
        with correlation() as inner:
            second = audit(None, None, "a.two")
        assert inner == outer
    assert first.correlation_id == second.correlation_id == outer
    assert audit(None, None, "a.three").correlation_id != outer
    with correlation("given-id"):
        assert audit(None, None, "a.four").correlation_id == "given-id"
    assert audit(None, None, "a.five", correlation_id="explicit").correlation_id == "explicit"


def test_room_writes_leave_their_rows():
    owner = make_user("owner")
    make_user("friend")
    room = make_discussion(owner)
    created = actions_of(room=room, component="room.create")
    assert len(created) == 1 and created[0].user == owner and created[0].input["after"]["name"] == "Test discussion"

    do_update_room(room, name="Renamed", actor=owner)
    (update,) = actions_of(room=room, component="room.update")
    assert update.input == {"before": {"name": "Test discussion"}, "after": {"name": "Renamed"}}

    chair = make_facilitator("Second chair", key="second-chair")
    previous = room.moderator_id
    do_change_moderator(room, owner, chair.pk)
    (change,) = actions_of(room=room, component="room.change_moderator")
    assert change.input == {"before": {"moderatorId": previous}, "after": {"moderatorId": chair.pk}} and change.user == owner

    member, created = do_share_room(room, username="friend", access="viewer", actor=owner)
    assert created and member.access == "viewer"
    member, created = do_share_room(room, username="friend", access="participant", actor=owner)
    assert not created and member.access == "participant" and RoomMember.objects.filter(room=room).count() == 1
    shares = actions_of(room=room, component="room.share")
    assert [s.input for s in shares] == [
        {"after": {"username": "friend", "access": "viewer"}},
        {"before": {"username": "friend", "access": "viewer"}, "after": {"username": "friend", "access": "participant"}},
    ]
    assert do_unshare_room(room, username="friend", actor=owner)
    (unshare,) = actions_of(room=room, component="room.unshare")
    assert unshare.input == {"before": {"username": "friend", "access": "participant"}}

    room_id = room.pk
    do_delete_room(room, actor=owner)
    (deleted,) = actions_of(component="room.delete")
    assert deleted.room is None and deleted.input["before"]["id"] == room_id and deleted.user == owner


def test_a_refused_write_leaves_no_row():
    owner = make_user("owner")
    room = make_discussion(owner)
    before = Invocation.objects.count()
    with pytest.raises(ValidationFailed):
        do_share_room(room, username="nobody", access="viewer", actor=owner)
    Room.objects.filter(pk=room.pk).update(status=Room.Status.ACTIVE)
    with pytest.raises(StateConflict):
        do_update_room(room, format="review", actor=owner)  # the format is fixed once started
    assert Invocation.objects.count() == before


def test_catalog_writes_leave_their_rows():
    user = make_user("maker")
    role = catalog.do_create_role(user, name="Reviewer", base_prompt="Review.")
    catalog.do_update_role(role, actor=user, name="Senior reviewer")
    persona = catalog.do_create_persona(user, name="Calm", prompt="Be calm.")
    catalog.do_update_persona(persona, actor=user, style="short")
    agent = catalog.do_create_agent(user, name="Rita", role=role.pk, persona=persona.pk)
    catalog.do_update_agent(agent, user, model="small")
    role_id = role.pk
    catalog.do_delete_agent(agent, actor=user)
    catalog.do_delete_persona(persona, actor=user)
    catalog.do_delete_role(role, actor=user)
    rows = actions_of(user=user)
    assert [r.component for r in rows if r.component.startswith("catalog.")] == [
        "catalog.role_create", "catalog.role_update", "catalog.persona_create", "catalog.persona_update",
        "catalog.agent_create", "catalog.agent_update", "catalog.agent_delete", "catalog.persona_delete",
        "catalog.role_delete",
    ]
    by = {r.component: r.input for r in rows}
    assert by["catalog.role_update"]["before"]["name"] == "Reviewer"
    assert by["catalog.role_update"]["after"]["name"] == "Senior reviewer"
    assert by["catalog.agent_create"]["after"]["role"] == role_id
    assert by["catalog.agent_update"]["before"]["model"] == "" and by["catalog.agent_update"]["after"]["model"] == "small"
    assert by["catalog.agent_delete"]["before"]["name"] == "Rita"


@pytest.mark.django_db(transaction=True)
def test_the_audit_row_is_rolled_back_with_its_change():
    owner = make_user("owner")
    room = make_discussion(owner)
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            do_update_room(room, name="Never", actor=owner)
            raise RuntimeError
    assert not actions_of(room=room, component="room.update")
