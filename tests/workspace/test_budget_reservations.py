"""The seats of one round check the workspace's budget at the same time: each call's most is kept on its slot's
lease while it runs, so together they cannot go over the budget (``leases.reserve``)."""
import pytest

from facilitation.llm import LLMRequest
from facilitation.runs import leases
from facilitation.workspace import rounds
from facilitation.workspace.actions.lifecycle import do_start_workspace
from rooms.models import Room
from tests.factories import make_user
from tests.workspace.helpers import make_workspace

LEASE = 60.0


def _request() -> LLMRequest:
    return LLMRequest(system="You observe.", messages=[{"role": "user", "content": "What do you see?"}], max_tokens=400,
                      purpose="workspace.observations")


@pytest.fixture
def round_one(db):
    """An active workspace in round 1 whose three agent slots are ready, claimed by three workers at once."""
    owner = make_user("reserver")
    room = make_workspace(owner, turn_policy={"maxEvents": 50, "maxSeconds": 600})
    do_start_workspace(room, owner)  # the slots are queued, not run: the test claims them
    step = leases.current(room.pk)
    claims = [leases.claim_step(room.pk, step.step_seq, LEASE, slot)[0] for slot in range(step.slots - 1)]
    return room, claims


def test_seats_checking_at_once_count_each_others_calls_in_flight(round_one):
    room, (first, second, third) = round_one
    need = rounds.budget.estimate(_request(), "rehearsal")
    Room.objects.filter(pk=room.pk).update(budget_tokens=2 * need[0] + need[0] // 2)  # room for two calls, not three
    assert rounds.over_budget(first, None, _request(), "rehearsal")[0] == ""
    assert rounds.over_budget(second, None, _request(), "rehearsal")[0] == ""
    over, why, third_need = rounds.over_budget(third, None, _request(), "rehearsal")
    assert over == "room" and third_need == need and "would go over the workspace's budget" in why
    assert leases.reserved(room.pk, third.slot) == (2 * need[0], 0.0)
    # A slot whose call is written no longer holds its need; what it spent counts instead, once.
    with rounds.transaction.atomic():
        leases.locked_room(room.pk)
        assert leases.finish(first) is not None
    Room.objects.filter(pk=room.pk).update(tokens_used=need[0] // 4)
    assert leases.reserved(room.pk, third.slot) == (need[0], 0.0)
    assert rounds.over_budget(third, None, _request(), "rehearsal")[0] == ""


def test_a_lost_or_given_back_lease_holds_nothing_and_a_lost_one_makes_no_call(round_one):
    room, (first, second, _third) = round_one
    need = rounds.budget.estimate(_request(), "rehearsal")
    assert rounds.over_budget(first, None, _request(), "rehearsal")[0] == ""
    leases.release_claim(first)  # a transient error: the attempt gives its lease back
    assert leases.reserved(room.pk, second.slot) == (0, 0.0)
    assert rounds.over_budget(first, None, _request(), "rehearsal")[0] == "lost"
    again = leases.claim_step(room.pk, first.step_seq, LEASE, first.slot)[0]
    assert leases.reserved(room.pk, second.slot) == (0, 0.0)  # the old attempt's need is not the new one's
    assert rounds.over_budget(again, None, _request(), "rehearsal")[0] == ""
    assert leases.reserved(room.pk, second.slot) == (need[0], 0.0)
