"""A facilitator's decision that a rule changed says so on its card: the reasoning the model gave stays, and the
rule that gave the floor to someone else reads beside it (else the reasoning seems to pick another speaker)."""
import pytest

from rooms.actions.rooms import do_create_room
from rooms.models import Agent, Seat
from tests.browser.conftest import pause_quietly
from tests.browser.test_room_names_and_messages import _turn

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_corrected_decision_names_the_rule_that_changed_it(make_page):
    page, owner = make_page("rhea")
    chair = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    architect, security = Agent.objects.get(is_builtin=True, alias="architect"), Agent.objects.get(is_builtin=True, alias="security")
    room = do_create_room(owner, name="Floor", topic="Which cache?", moderator_id=chair.pk, participants=[
        {"agent_id": architect.pk, "role": "participant"}, {"agent_id": security.pk, "role": "participant"}])
    seats = {s.agent_id: s for s in room.seats.all()}
    facilitator = next(s for s in seats.values() if s.role == Seat.Role.FACILITATOR)
    rule = (f"{security.name} was asked for with @ and has not had the floor since; "
            f"{security.name} speaks instead of {architect.name}.")
    _turn(room, facilitator, round=0, author_kind="facilitator", kind="decision", content="Which cache?",
          data={"decision": "continue", "nextParticipantId": seats[security.pk].pk, "question": "Which cache fits?",
                "reasoning": f"{architect.name} has spoken least so far.", "fallback": None,
                "corrections": [{"rule": "floor_request", "reason": rule, "from": seats[architect.pk].pk,
                                 "to": seats[security.pk].pk}]})
    _turn(room, facilitator, round=1, author_kind="facilitator", kind="decision", content="Go on.",
          data={"decision": "continue", "nextParticipantId": seats[architect.pk].pk, "question": "Go on.",
                "reasoning": "Balance.", "fallback": None, "corrections": []})
    pause_quietly(room)
    page.goto(f"/discussions/{room.pk}/")
    cards = page.locator("#timeline .tcard.moderator")
    cards.nth(1).wait_for()
    first = cards.nth(0)
    assert first.locator(".badge.decision").inner_text() == f"Continue → {security.name}"
    assert first.locator("dd.reasoning").inner_text() == f"{architect.name} has spoken least so far."
    assert first.locator("dt", has_text="Rule applied").count() == 1
    assert first.locator("dd.corrections").inner_text() == rule
    assert cards.nth(1).locator("dd.corrections").count() == 0  # nothing changed the second one
    assert not page.errors, page.errors
