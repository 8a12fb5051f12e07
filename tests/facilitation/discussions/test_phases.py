"""Votes decide: consensus rules, independent ballots, phases that advance by themselves or by the owner."""
import pytest

from facilitation.actions.lifecycle import do_start_discussion
from facilitation.actions.phases import deliberation_settings, do_advance_phase, votes_document
from facilitation.actions.steps import Speaker, commit_turn
from facilitation.deliberation.markers import parse_markers
from facilitation.runs import leases
from facilitation.runs.scheduling import inline
from rooms.errors import StateConflict, ValidationFailed
from rooms.models import Observation, Room, RoomEvent, Seat
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


def discussion(owner, template="", consensus=None, roles=("participant", "participant", "participant")):
    settings = deliberation_settings(template or None, consensus)
    room = make_discussion(owner, roles=roles, max_rounds=10, deliberation=settings)
    with inline():
        do_start_discussion(room)
    room.refresh_from_db()
    return room


def say(room, seat, text):
    """Commit one participant turn for ``seat`` through the engine's own commit (as a worker would)."""
    room.refresh_from_db()
    claim, _ = leases.claim_step(room.pk, leases.current(room.pk).step_seq, 60)
    with inline():
        assert commit_turn(claim, Speaker(seat.pk, seat.agent.name, seat.role), text, "ok", parse_markers(text), None, "scripted")
    room.refresh_from_db()
    return room


def speakers(room):
    return list(Seat.objects.filter(room=room, role="participant").select_related("agent"))


def test_bad_settings_are_refused_with_clear_messages():
    with pytest.raises(ValidationFailed) as caught:
        deliberation_settings("waterfall", {"threshold": 2}, 4)
    assert set(caught.value.details) == {"template", "consensus", "maxParallel"}
    for template in (["feature"], {"k": 1}, 3):
        with pytest.raises(ValidationFailed):
            deliberation_settings(template)


def test_the_latest_vote_per_voter_counts_and_a_reject_blocks():
    owner = make_user()
    room = discussion(owner, consensus={"threshold": 0.6})
    a, b, c = speakers(room)
    say(room, a, "VOTE: REJECT not yet")
    say(room, b, "VOTE: READY")
    say(room, c, "VOTE: READY")
    doc = votes_document(room)
    assert doc["tally"] == {"ready": 2, "changes": 0, "reject": 1} and not doc["consensus"]["reached"]
    assert "REJECT" in doc["consensus"]["reason"]
    say(room, a, "Fine by me now.\nVOTE: READY")
    doc = votes_document(room)
    assert doc["tally"] == {"ready": 3, "changes": 0, "reject": 0} and doc["consensus"]["reached"]
    assert [v["name"] for v in doc["votes"]] == [b.agent.name, c.agent.name, a.agent.name]


def test_consensus_in_a_template_phase_advances_and_votes_start_over():
    owner = make_user()
    room = discussion(owner, template="code_review")
    a, b, c = speakers(room)
    assert room.phase == "read"
    do_advance_phase(room)  # read is manual: the owner moves on
    room.refresh_from_db()
    assert room.phase == "resolve"
    for seat in (a, b):
        say(room, seat, "VOTE: READY")
    assert room.phase == "resolve"  # 2 of 3 is below 0.67
    say(room, c, "VOTE: READY")
    assert room.phase == "verdict"
    assert votes_document(room)["votes"] == []  # a new phase, a new ballot
    events = [e.payload for e in RoomEvent.objects.filter(room=room, type="discussion:phase").order_by("seq")]
    assert [e["phase"] for e in events] == ["resolve", "verdict"] and len(events[-1]["votes"]) == 3


def test_independent_ballot_is_sealed_until_all_voted_then_the_last_phase_concludes():
    owner = make_user()
    room = discussion(owner, template="adr")
    a, b, c = speakers(room)
    do_advance_phase(room)
    do_advance_phase(room)
    room.refresh_from_db()
    assert room.phase == "decision"
    say(room, a, "VOTE: REJECT")
    sealed = votes_document(room)
    assert sealed["sealed"] and {v["value"] for v in sealed["votes"]} == {"sealed"} and sealed["tally"]["reject"] is None
    say(room, b, "VOTE: READY")
    say(room, c, "VOTE: READY")
    room.refresh_from_db()
    revealed = votes_document(room)
    assert not revealed["sealed"] and revealed["tally"] == {"ready": 2, "changes": 0, "reject": 1}
    # everyone voted in the last phase: the facilitator synthesizes next
    assert room.engine_state["phase"] == "synthesis"
    with pytest.raises(StateConflict):
        do_advance_phase(room)


def test_with_human_required_a_persons_ready_comment_is_what_reaches_consensus():
    from facilitation.actions.comments import do_post_comment

    owner = make_user()
    room = discussion(owner, template="feature", consensus={"humanRequired": True})
    a, b, c = speakers(room)
    do_advance_phase(room)
    room.refresh_from_db()
    for seat in (a, b, c):
        say(room, seat, "VOTE: READY")
    doc = votes_document(room)
    assert doc["tally"]["ready"] == 3 and not doc["consensus"]["reached"]
    assert "person's vote is required" in doc["consensus"]["reason"]
    assert room.phase == "shape"  # every seat READY, and still no consensus without a person
    do_post_comment(room.pk, owner, "I have read it all: fine by me.")
    room.refresh_from_db()
    assert room.phase == "shape"  # a comment without a vote changes nothing
    turn = do_post_comment(room.pk, owner, "Agreed.\nVOTE: READY")
    room.refresh_from_db()
    assert room.phase == "commit"  # the person's READY reached consensus: the phase moved on
    phase_event = RoomEvent.objects.filter(room=room, type="discussion:phase").order_by("-seq").first()
    assert phase_event.seq > turn.seq and phase_event.payload["phase"] == "commit"
    carried = {v["name"]: v["value"] for v in phase_event.payload["votes"]}
    assert carried[owner.get_username()] == "READY" and len(carried) == 4


def test_a_persons_reject_blocks_and_withdrawing_it_reaches_consensus():
    from facilitation.actions.comments import do_post_comment
    from rooms.models import RoomMember

    owner = make_user()
    ana = make_user("ana", first_name="Ana")
    room = discussion(owner, template="code_review")
    RoomMember.objects.create(room=room, user=ana, access="participant")
    a, b, c = speakers(room)
    do_advance_phase(room)
    do_post_comment(room.pk, ana, "The migration drops a column we still read.\nVOTE: REJECT")
    for seat in (a, b, c):
        say(room, seat, "VOTE: READY")
    room.refresh_from_db()
    doc = votes_document(room)
    assert room.phase == "resolve" and not doc["consensus"]["reached"] and "REJECT" in doc["consensus"]["reason"]
    assert {v["name"]: v["value"] for v in doc["votes"]}["Ana"] == "REJECT"
    do_post_comment(room.pk, ana, "They fixed it in the last commit.\nVOTE: READY")
    room.refresh_from_db()
    assert room.phase == "verdict"


def test_a_persons_vote_in_the_last_phase_concludes_at_the_next_decision():
    from facilitation.actions.comments import do_post_comment
    from facilitation.actions.steps import commit_decision
    from facilitation.engine import Decision

    owner = make_user()
    room = discussion(owner, template="feature", consensus={"humanRequired": True})
    a, b, c = speakers(room)
    do_advance_phase(room)
    do_advance_phase(room)
    room.refresh_from_db()
    assert room.phase == "commit"
    from facilitation.actions import phases

    for seat in (a, b):
        say(room, seat, "VOTE: READY")
    assert not phases.concludes(Room.objects.get(pk=room.pk))
    say(room, c, "VOTE: READY")
    room.refresh_from_db()
    assert room.engine_state["phase"] == "synthesis" and room.engine_state["synthesisReason"] == "consensus"
    # When the condition comes to hold between turns (a person's vote), the facilitator's next decision
    # to continue becomes the synthesis, with the reason on the decision.
    Room.objects.filter(pk=room.pk).update(engine_state={**room.engine_state, "phase": "evaluation"})
    do_post_comment(room.pk, owner, "VOTE: READY")
    claim, _ = leases.claim_step(room.pk, leases.current(room.pk).step_seq, 60)
    with inline():
        assert commit_decision(claim, Decision("continue", a.pk, "More?", ""), None, None, "Chair", "scripted")
    room.refresh_from_db()
    assert room.engine_state["phase"] == "synthesis" and room.engine_state["synthesisReason"] == "consensus"
    decided = Observation.objects.filter(room=room, kind="decision").order_by("-seq").first().data
    assert decided["decision"] == "synthesize" and decided["corrections"][-1]["rule"] == "consensus"
