"""A discussion's participants carry their agent's alias: two agents of one name can be told apart over REST."""
from rooms.actions.catalog import do_create_agent
from rooms.actions.rooms import do_create_room
from rooms.models import Seat
from tests.factories import make_facilitator, make_participant


def test_participants_of_one_name_carry_their_aliases(people, owner_api, db):
    owner = people["owner"]
    builtin = make_participant("Architect", alias="architect")
    own = do_create_agent(owner, name="Architect")
    assert own.alias == "architect-2"
    chair = make_facilitator("Chair Alias", key="chair-alias")
    room = do_create_room(owner, name="Twins", topic="Which cache?", moderator_id=chair.pk,
                          participants=[{"agent_id": builtin.pk, "role": "participant"}, {"agent_id": own.pk, "role": "participant"}])
    Seat.objects.create(room=room, user=people["participant"], role="participant", position=9)
    data = owner_api.get(f"/api/discussions/{room.pk}").json()["data"]
    seats = {(p["agentId"], p["name"], p["alias"]) for p in data["participants"]}
    assert seats == {(builtin.pk, "Architect", "architect"), (own.pk, "Architect", "architect-2"),
                     (None, people["participant"].username, None)}  # a person's seat has no alias
    assert data["moderator"]["alias"] == chair.alias
