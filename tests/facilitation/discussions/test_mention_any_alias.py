"""Every alias an agent can have is @mentionable: an alias is a slug (given, or derived from the name), so it
may start with a digit, ``-`` or ``_`` and end with ``-`` or ``_``; ``@42``, ``@3d-artist``, ``@_bot`` and
``@bot_`` were not read as mentions (the parser wanted a letter first and cut a trailing ``-``/``_``), so a
person asking for such an agent was not heard. Here, on the offline rehearsal model, from the catalog action
that creates the agents to the facilitator's next decision."""
import pytest

from facilitation.actions.comments import do_post_comment
from facilitation.context import load_context
from facilitation.runs.runner import run_step
from facilitation.runs.scheduling import inline
from rooms.actions.catalog import do_create_agent
from rooms.actions.rooms import do_create_room
from rooms.models import Observation, Room
from tests.facilitation.discussions.test_steps import start_and_open, step_of
from tests.factories import make_facilitator, make_user

pytestmark = pytest.mark.django_db


def _decision(room) -> dict:
    return Observation.objects.filter(room=room, kind="decision").order_by("-seq").first().data


def _step(room) -> None:
    with inline():
        assert run_step(room.pk, step_of(room)).outcome == "committed"
    room.refresh_from_db()


@pytest.mark.parametrize("name, alias", [
    ("Forty-two", "42"),         # all digits (and another seat's id could be 42: a mention names the alias)
    ("3D Artist", ""),           # derived from the name: 3d-artist
    ("Underscore", "_bot"),
    ("Trailing", "bot_"),
    ("Dash", "-x"),
])
def test_a_persons_mention_of_any_alias_gives_that_agent_the_floor(settings, name, alias):
    assert settings.CONVENE["DEFAULT_PROVIDER"] == "rehearsal"
    owner = make_user()
    # The rehearsal's impartial chair gives the floor to the seat the latest turn addressed, whatever the seeds.
    chair = make_facilitator("Chair", key="impartial-chair-mentions")
    first = do_create_agent(owner, name="Ada", alias="ada")
    second = do_create_agent(owner, name="Bob", alias="bob")
    wanted = do_create_agent(owner, name=name, **({"alias": alias} if alias else {}))
    assert wanted.alias == (alias or "3d-artist")
    room = do_create_room(owner, name="Mentions", topic="Should we cache?", format="deliberation",
                          moderator_id=chair.pk, max_rounds=6,
                          participants=[{"agent_id": a.pk, "role": "participant"} for a in (first, second, wanted)])
    start_and_open(room)
    _step(room)  # the first speaker's turn
    seat = room.seats.get(agent=wanted)

    comment = do_post_comment(room.pk, owner, f"@{wanted.alias} you know this best: what do you think?")
    assert [m["target"] for m in comment.markers if m["type"] == "mention"] == [wanted.alias]
    state = load_context(Room.objects.get(pk=room.pk)).room
    assert state.mentions == [seat.pk] and seat.pk in state.requested  # (the first turn may have asked for someone)
    _step(room)  # the facilitator's next decision
    decision = _decision(room)
    assert decision["decision"] == "continue" and decision["nextParticipantId"] == seat.pk
