"""facilitation.context: a room's seat rows read exactly as at its step before give the same views, and any
change to a seat, an agent, its persona or its role, or the usage of an agent with a budget, shows at once."""
from decimal import Decimal

import pytest

from facilitation.context import load_context
from rooms.models import Agent, Room, Seat

from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


def _context(room: Room):
    return load_context(Room.objects.get(pk=room.pk))  # as a step reads the room


def _first_agent(ctx):
    return ctx.agents[ctx.seats[0].id]


def test_unchanged_rows_give_the_views_made_before():
    room = make_discussion(make_user())
    first, second = _context(room), _context(room)
    assert _first_agent(second) is _first_agent(first)
    assert second.facilitator is first.facilitator
    assert second.seats == first.seats


def test_an_edit_to_an_agent_its_persona_or_its_role_shows_at_the_next_read():
    room = make_discussion(make_user())
    before = _first_agent(_context(room))
    agent = Agent.objects.get(pk=before.agent_id)
    agent.name = "Renamed"
    agent.save()
    agent.persona.prompt = "You are terse."
    agent.persona.save()
    agent.role.base_prompt = "Speak as the auditor."
    agent.role.save()
    after = _context(room)
    view = _first_agent(after)
    assert (view.name, view.persona_prompt, view.role_prompt) == ("Renamed", "You are terse.", "Speak as the auditor.")
    assert after.seats[0].name == "Renamed"
    assert _first_agent(_context(room)) is view  # and is kept from then on


def test_a_seat_that_leaves_or_changes_role_shows_at_the_next_read():
    room = make_discussion(make_user(), roles=("participant", "participant"))
    ctx = _context(room)
    seat_id = ctx.seats[1].id
    Seat.objects.filter(pk=seat_id).update(is_active=False, role=Seat.Role.DEVIL_ADVOCATE)
    seat = _context(room).seat(seat_id)
    assert (seat.active, seat.role) == (False, "devil_advocate")


def test_usage_is_read_afresh_for_an_agent_with_a_budget_and_reads_0_without_one():
    room = make_discussion(make_user())
    ctx = _context(room)
    budgeted, free = (ctx.agents[s.id].agent_id for s in ctx.seats[:2])
    Agent.objects.filter(pk=budgeted).update(budget_tokens=1000, tokens_used=900, cost_usd=Decimal("0.5"))
    Agent.objects.filter(pk=free).update(tokens_used=700, cost_usd=Decimal("0.25"))
    ctx = _context(room)
    seen = {ctx.agents[s.id].agent_id: ctx.agents[s.id] for s in ctx.seats}
    assert (seen[budgeted].tokens_used, seen[budgeted].cost_usd) == (900, 0.5)
    assert (seen[free].tokens_used, seen[free].cost_usd) == (0, 0.0)
    Agent.objects.filter(pk=budgeted).update(tokens_used=950)
    again = _context(room)
    assert next(v for v in again.agents.values() if v.agent_id == budgeted).tokens_used == 950
    # the agent without a budget read the same: its view is the one made before
    assert next(v for v in again.agents.values() if v.agent_id == free) is seen[free]
