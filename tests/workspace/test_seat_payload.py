"""A workspace seat as payloads render it: whose agent it is, under both names clients read."""
import pytest

from facilitation.workspace.payloads import seat_payload
from rooms.models import Agent, Seat
from tests.factories import make_user
from tests.workspace.helpers import agent_seats, make_workspace

pytestmark = pytest.mark.django_db


def test_a_seats_owner_and_its_older_name_agent_owner_are_both_there_and_the_same():
    manager = make_user("manager")
    room = make_workspace(manager, agents=1)
    builtin = agent_seats(room)[0]
    mine = Seat.objects.create(room=room, agent=Agent.objects.create(name="Mine", alias="mine", created_by=manager),
                               role="participant", position=50)
    gone_owner = make_user("leaver")
    orphan = Seat.objects.create(room=room, agent=Agent.objects.create(name="Orphan", alias="orphan", created_by=gone_owner),
                                 role="participant", position=60)
    gone_owner.delete()
    person = Seat.objects.create(room=room, user=make_user("person"), role="participant", position=70)
    owners = {}
    for seat in (builtin, mine, orphan, person):
        payload = seat_payload(Seat.objects.get(pk=seat.pk))
        assert payload["agentOwner"] == payload["owner"], payload
        owners[seat.pk] = payload["owner"]
    assert owners == {builtin.pk: None, mine.pk: "manager", orphan.pk: None, person.pk: None}
