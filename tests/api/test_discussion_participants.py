"""A discussion's participants carry their agent's alias: two agents of one name can be told apart over REST."""
from rooms.actions.catalog import do_create_agent
from rooms.actions.rooms import do_create_room, do_share_room
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


def test_each_seat_and_the_moderator_say_whose_agent_it_is_whoever_owns_the_room(people, clients, db):
    """A staff member's room may seat someone else's agents: each participant (and the moderator) names its agent's
    owner, not the room's; a built-in's owner is null and so is a person's seat's."""
    tara, staff = people["other"], people["staff"]
    builtin = make_participant("Architect", alias="architect")
    theirs = do_create_agent(tara, name="Architect")
    their_chair = do_create_agent(tara, name="Tara's chair", is_facilitator=True)
    room = do_create_room(staff, name="Twins", topic="Which cache?", moderator_id=their_chair.pk,
                          participants=[{"agent_id": builtin.pk, "role": "participant"}, {"agent_id": theirs.pk, "role": "participant"}])
    Seat.objects.create(room=room, user=people["participant"], role="participant", position=9)
    do_share_room(room, username=people["viewer"].username, access="viewer")
    for caller in ("staff", "viewer"):
        data = clients[caller].get(f"/api/discussions/{room.pk}").json()["data"]
        whose = {p["name"] if p["agentId"] is None else p["alias"]: (p["owner"], p["isBuiltin"]) for p in data["participants"]}
        assert whose == {"architect": (None, True), theirs.alias: ("other", False), people["participant"].username: (None, False)}
        assert (data["owner"], data["moderator"]["owner"], data["moderator"]["isBuiltin"]) == ("staff", "other", False)
    rows = clients["staff"].get("/api/discussions").json()["data"]
    assert [(r["moderator"]["owner"], r["moderator"]["isBuiltin"]) for r in rows if r["id"] == room.pk] == [("other", False)]


def test_a_built_in_moderator_has_no_owner(people, owner_api, db):
    chair = make_facilitator("Chair Alias", key="chair-alias")
    room = do_create_room(people["owner"], name="Plain", topic="Which cache?", moderator_id=chair.pk,
                          participants=[{"agent_id": make_participant("Ada", alias="ada").pk, "role": "participant"}])
    moderator = owner_api.get(f"/api/discussions/{room.pk}").json()["data"]["moderator"]
    assert (moderator["owner"], moderator["isBuiltin"]) == (None, True)
