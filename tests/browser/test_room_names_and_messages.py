"""The room page: agents of one name told apart everywhere it names them, errors in words (no API field
paths), and a vote written mid-line is said not to count."""
import pytest

from rooms.actions.catalog import do_create_agent
from rooms.actions.rooms import do_create_room, do_share_room
from rooms.events.log import next_seq
from rooms.models import Agent, Observation, Seat
from tests.browser.conftest import pause_quietly, sign_in_as, shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _turn(room, seat, **fields):
    return Observation.objects.create(room=room, seq=next_seq(room), seat=seat, author_name=seat.display_name, **fields)


def test_two_architects_are_told_apart_in_the_room(make_page):
    page, owner = make_page("tara")
    builtin = Agent.objects.get(is_builtin=True, alias="architect")
    mine = do_create_agent(owner, name="Architect")
    assert mine.alias == "architect-2"
    chair = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    room = do_create_room(owner, name="Twins", topic="Which cache?", moderator_id=chair.pk, participants=[
        {"agent_id": builtin.pk, "role": "participant"}, {"agent_id": mine.pk, "role": "participant"}])
    seats = {s.agent_id: s for s in room.seats.all()}
    facilitator = next(s for s in seats.values() if s.role == Seat.Role.FACILITATOR)
    _turn(room, facilitator, round=0, author_kind="facilitator", kind="decision", content="Which cache?",
          data={"decision": "continue", "nextParticipantId": seats[mine.pk].pk, "question": "Which cache fits?",
                "reasoning": "Start with the owner's architect.", "fallback": None})
    # A person's comment while the facilitator opens: said before the first round.
    Observation.objects.create(room=room, seq=next_seq(room), round=0, author_name="tara", author_kind="human",
                               kind="contribution", content="Mind the cart.")
    _turn(room, seats[mine.pk], round=1, kind="contribution", content="Cache the catalogue.", tokens=120)
    _turn(room, seats[builtin.pk], round=2, kind="contribution", content="Not the cart.", tokens=80)
    pause_quietly(room)

    ours, theirs = "Architect (@architect-2, yours)", "Architect (@architect, built-in)"
    page.goto(f"/discussions/{room.pk}/")
    page.locator("#timeline .tcard.turn").nth(2).wait_for()
    people = page.locator("#people .person .name").all_inner_texts()
    assert people == ["The Impartial Chair", theirs, ours], people
    speakers = page.locator("#timeline .tcard.turn .speaker").all_inner_texts()
    assert speakers[1:] == [ours, theirs], speakers
    rounds = page.locator("#timeline .tcard.turn .card-head > .muted.small:nth-child(3)").all_inner_texts()
    assert rounds == ["Opening", "Round 1", "Round 2"], rounds  # no "Round 0"
    assert page.locator("#timeline .tcard.moderator .badge.decision").inner_text() == f"Continue → {ours}"
    page.wait_for_function("() => document.querySelectorAll('#airtime li').length === 3")  # the person's comment too
    airtime = page.locator("#airtime li .who").all_inner_texts()
    assert {ours, theirs} <= set(airtime), airtime
    shot(page, "room-same-names.png")
    assert not page.errors, page.errors

    # Someone the room is shared with reads whose the owner's one is.
    viewer_page, viewer = make_page("vera", sign_in=False)
    do_share_room(room, username=viewer.username, access="viewer")
    sign_in_as(viewer_page, viewer.username)
    viewer_page.goto(f"/discussions/{room.pk}/")
    viewer_page.locator("#timeline .tcard.turn").nth(1).wait_for()
    assert viewer_page.locator("#people .person .name").all_inner_texts() == [
        "The Impartial Chair", theirs, "Architect (@architect-2, tara's)"]
    assert not viewer_page.errors, viewer_page.errors


def test_a_staff_room_names_whose_each_agent_is_not_the_room_owner_s(make_page):
    """A staff member's room may seat someone else's agent: its label names that agent's owner (each seat says whose
    its agent is), not the staff member who owns the room."""
    page, staff = make_page("sam")
    staff.is_staff = True
    staff.save(update_fields=["is_staff"])
    tara = make_page("tara", sign_in=False)[1]
    builtin = Agent.objects.get(is_builtin=True, alias="architect")
    theirs = do_create_agent(tara, name="Architect")
    chair = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    room = do_create_room(staff, name="Borrowed", topic="Which cache?", moderator_id=chair.pk, participants=[
        {"agent_id": builtin.pk, "role": "participant"}, {"agent_id": theirs.pk, "role": "participant"}])
    page.goto(f"/discussions/{room.pk}/")
    page.wait_for_function("() => document.querySelectorAll('#people .person .name').length === 3")
    assert page.locator("#people .person .name").all_inner_texts() == [
        "The Impartial Chair", "Architect (@architect, built-in)", f"Architect (@{theirs.alias}, tara's)"]
    assert not page.errors, page.errors


def test_a_room_s_errors_name_no_api_field_and_a_vote_mid_line_is_said_not_to_count(make_page):
    page, owner = make_page("omar")
    builtin = Agent.objects.get(is_builtin=True, alias="architect")
    chair = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    room = do_create_room(owner, name="Votes", topic="Ship it?", moderator_id=chair.pk,
                          participants=[{"agent_id": builtin.pk, "role": "participant"}])
    pause_quietly(room)  # people may speak; no step runs
    page.goto(f"/discussions/{room.pk}/")
    page.locator("#comment-form:not([hidden])").wait_for()

    # Sharing with someone who does not exist: the message, not "username: …".
    page.get_by_label("Username").fill("nobody-here")
    page.get_by_role("button", name="Share").click()
    error = page.locator("#share-error")
    error.wait_for()
    assert error.inner_text() == "No such user. No active user by that name can be added.", error.inner_text()
    assert "username:" not in error.inner_text()

    # A vote in the middle of a line is posted as a comment, and the person is told it did not count.
    note = page.locator("#comment-note")
    page.locator("#comment-text").fill("I think we should wait. VOTE: READY")
    page.get_by_role("button", name="Post comment").click()
    note.wait_for()
    assert "vote was not counted" in note.inner_text() and "a line of its own" in note.inner_text()
    assert "VOTE: READY" in note.inner_text()
    page.wait_for_function("() => document.querySelector('#comment-text').value === ''")
    # One on a line of its own counts, and nothing is said.
    page.locator("#comment-text").fill("I think we should wait.\nVOTE: READY")
    page.get_by_role("button", name="Post comment").click()
    page.wait_for_function("() => document.querySelector('#comment-note').hidden")
    page.wait_for_function("() => document.querySelectorAll('#timeline .tcard.turn').length === 2")
    votes = [m for o in Observation.objects.filter(room=room).order_by("seq") for m in o.markers if m["type"] == "vote"]
    assert len(votes) == 1  # the mid-line one was not counted (the parser is unchanged)
    shot(page, "room-vote-not-counted.png")
    assert not page.errors, page.errors
