"""Who gets the floor and what a prompt may show: sealed ballots, @alias and @all, passes, background seats."""
import pytest

from facilitation.actions.comments import do_post_comment
from facilitation.actions.phases import do_advance_phase, votes_document
from facilitation.context import SEALED_LINE, load_context
from facilitation.deliberation.markers import is_pass
from facilitation.engine import Decision, Evaluation, ParticipantTurn, apply_guardrails
from facilitation.llm.base import prompt_text
from facilitation.prompts.builder import for_step
from facilitation.prompts.instructions import SEAT_ROLES
from facilitation.runs.runner import run_step
from facilitation.runs.scheduling import inline
from rooms.models import Observation, Room, Seat
from tests.facilitation.discussions.test_phases import discussion, say, speakers
from tests.facilitation.discussions.test_steps import model, start_and_open, step_of  # noqa: F401 (a fixture)
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


def prompt_for(room, seat) -> str:
    """What ``seat`` would be shown for its next turn."""
    ctx = load_context(Room.objects.get(pk=room.pk))
    return prompt_text(for_step(ctx, ParticipantTurn(seat_id=seat.pk, question="Your vote?"), 30))


def facilitator_prompt(room) -> str:
    ctx = load_context(Room.objects.get(pk=room.pk))
    return prompt_text(for_step(ctx, Evaluation(rounds_left=3, must_synthesize=False), 30))


# --- independent ballots ------------------------------------------------------------------


def test_a_participants_prompt_during_a_ballot_holds_none_of_that_ballots_votes():
    room = discussion(make_user(), template="adr")
    a, b, c = speakers(room)
    say(room, a, "Context first.\nVOTE: CHANGES until we hear about quasar budgets")  # a vote in an earlier phase
    do_advance_phase(room)
    do_advance_phase(room)
    room.refresh_from_db()
    assert room.phase == "decision"
    say(room, a, "Option B is my pick.\nVOTE: REJECT because the zorblax migration is unsafe")
    assert "The ballot is open: 1 of 3 voters has voted." in facilitator_prompt(room)  # the verb agrees with one
    say(room, b, "I lean the other way.\n- VOTE: **READY** since the florbit tests pass")
    for text in (prompt_for(room, c), facilitator_prompt(room)):
        assert "zorblax" not in text and "florbit" not in text  # neither ballot's words nor its values
        assert "Option B is my pick." in text and "I lean the other way." in text  # the rest of the turns stay
        assert text.count(SEALED_LINE) == 2
        assert "Standing REJECT votes, unanswered: none" in text
        assert "vote REJECT" not in text and "vote READY" not in text  # the airtime lines show no ballot
        assert "The ballot is open: 2 of 3 voters have voted." in text
        assert "Phase 3 (decision)" in text and "Independent ballot" in text
        assert "quasar budgets" in text  # the earlier phase's vote is not part of this ballot
    # The REJECT still stands for the record, and a sealed REJECT is no blocker the guardrails would reveal.
    ctx = load_context(Room.objects.get(pk=room.pk))
    assert [v.value for v in ctx.room.standing_rejects] == ["REJECT"]
    assert ctx.guardrail_facts(3).blockers == ()
    # The last ballot is cast: everything is revealed, and the discussion goes to its synthesis.
    say(room, c, "VOTE: READY")
    room.refresh_from_db()
    assert not votes_document(room)["sealed"] and room.engine_state["phase"] == "synthesis"
    ctx = load_context(room)
    assert ctx.sealed_from is None
    assert "zorblax" in prompt_text(for_step(ctx, ParticipantTurn(seat_id=c.pk, question="?"), 30))


def test_an_open_vote_is_shown_to_everyone():
    room = discussion(make_user(), template="feature")
    a, b, c = speakers(room)
    do_advance_phase(room)  # shape: open voting
    say(room, a, "VOTE: CHANGES unless the snarfle cache has a TTL")
    text = prompt_for(room, b)
    assert "snarfle" in text and SEALED_LINE not in text and "vote CHANGES" in text


# --- @alias, @all and passes ----------------------------------------------------------------------


def _decision(room):
    return Observation.objects.filter(room=room, kind="decision").order_by("-seq").first().data


def _step(room):
    with inline():
        assert run_step(room.pk, step_of(room)).outcome == "committed"
    room.refresh_from_db()


def test_a_persons_at_alias_gives_that_seat_the_floor_at_the_next_decision(model):  # noqa: F811
    owner = make_user()
    room = make_discussion(owner, roles=("participant",) * 3, max_rounds=6)
    start_and_open(room)
    a, b, c = speakers(room)
    assert _decision(room)["nextParticipantId"] == a.pk
    _step(room)  # a speaks; the scripted facilitator would now ask b (round robin)
    do_post_comment(room.pk, owner, f"@{c.agent.alias} you know the cache best: what do you think?")
    _step(room)  # the evaluation
    decision = _decision(room)
    assert decision["nextParticipantId"] == c.pk
    assert decision["corrections"][-1]["rule"] == "floor_request" and decision["question"].startswith(c.agent.name)
    _step(room)  # c speaks: the request is served
    _step(room)
    assert _decision(room)["nextParticipantId"] == a.pk and _decision(room)["corrections"] == []


def test_a_participants_at_alias_asks_for_the_next_decision_only(model):  # noqa: F811
    room = make_discussion(make_user(), roles=("participant",) * 3, max_rounds=8)
    a, b, c = speakers(room)
    model([{"purpose": "contribution", "speaker": a.agent.name, "text": f"@{c.agent.alias}, your view please?"}])
    start_and_open(room)
    _step(room)  # a asks for c
    _step(room)
    assert _decision(room)["nextParticipantId"] == c.pk and _decision(room)["corrections"][-1]["rule"] == "floor_request"
    assert load_context(room).room.requested == []  # asked once: the decision after it served it


def test_at_all_asks_every_speaking_seat_until_each_had_the_floor():
    owner = make_user()
    room = discussion(owner)
    a, b, c = speakers(room)
    say(room, a, "My opening view.")
    do_post_comment(room.pk, owner, "Before we go on: @all, is anything blocking?")
    ctx = load_context(Room.objects.get(pk=room.pk))
    assert ctx.room.requested == [a.pk, b.pk, c.pk]
    assert f"Asked for the floor with @, not heard since: [{a.pk}]" in facilitator_prompt(room)
    facts = ctx.guardrail_facts(5)
    # The facilitator wanted a again (it spoke last): b, the first asked who may speak, gets the floor.
    decided = apply_guardrails(Decision("continue", a.pk, "More?", ""), facts)
    assert decided.next_participant_id == b.pk
    say(room, b, "Nothing blocks me.")
    ctx = load_context(Room.objects.get(pk=room.pk))
    assert ctx.room.requested == [a.pk, c.pk]  # a person's request stands until served
    say(room, c, "Nor me.")
    say(room, a, "All clear.")
    assert load_context(Room.objects.get(pk=room.pk)).room.requested == []


def test_no_response_is_a_pass_not_airtime(model):  # noqa: F811
    room = make_discussion(make_user(), roles=("participant",) * 3, max_rounds=6)
    a, b, c = speakers(room)
    model([{"purpose": "contribution", "speaker": b.agent.name, "text": " `NO_RESPONSE` "}])
    start_and_open(room)
    for _ in range(4):  # a's turn, evaluation, b's turn, evaluation
        _step(room)
    passed = Observation.objects.get(room=room, seat=b, kind="contribution")
    assert passed.content == "NO_RESPONSE" and passed.data == {"pass": True} and passed.markers == []
    ctx = load_context(room)
    air = ctx.room.airtime[b.pk]
    assert (air.turns, air.words, air.spoken, air.passes) == (0, 0, 0, 1)
    assert ctx.room.floor_of(b.pk) == 1 and b.pk not in [s.id for s in ctx.room.unheard]
    text = prompt_text(for_step(ctx, Evaluation(rounds_left=2, must_synthesize=False), 30))
    assert "0 turns, 0 words, not heard yet; no vote (passed 1 time)" in text
    assert "(passed: nothing to add)" in text
    assert _decision(room)["nextParticipantId"] == c.pk  # the rotation goes on
    assert is_pass("no_response.") and is_pass("**NO_RESPONSE**") and not is_pass("NO_RESPONSE, but one thing:")


# --- background seats ----------------------------------------------------------------------------


def test_a_background_seat_speaks_only_when_asked_for_a_vote():
    owner = make_user()
    room = discussion(owner, template="feature", roles=("participant", "participant", "background"))
    a, b = speakers(room)
    bg = Seat.objects.get(room=room, role="background")
    ctx = load_context(room)
    assert bg.pk not in [s.id for s in ctx.speakers]  # explore takes no votes
    corrected = apply_guardrails(Decision("continue", bg.pk, "Your view?", ""), ctx.guardrail_facts(5))
    assert corrected.next_participant_id != bg.pk and corrected.corrections[-1]["rule"] == "not_speaking"
    do_advance_phase(room)  # shape takes votes: the background seat is asked for its vote
    room.refresh_from_db()
    ctx = load_context(room)
    assert bg.pk in [s.id for s in ctx.speakers]
    assert SEAT_ROLES["background"] in prompt_text(for_step(ctx, ParticipantTurn(seat_id=bg.pk, question="Vote?"), 30))
    say(room, a, "VOTE: READY")
    say(room, b, "VOTE: READY")
    room.refresh_from_db()
    assert room.phase == "shape"  # 2 of 3 voters: the background seat's vote is wanted too
    say(room, bg, "VOTE: READY it is sound")
    room.refresh_from_db()
    assert room.phase == "commit"  # consensus with the background seat's vote
    ctx = load_context(room)
    assert bg.pk in [s.id for s in ctx.speakers]  # a new ballot asks it again
    say(room, bg, "VOTE: CHANGES")
    ctx = load_context(Room.objects.get(pk=room.pk))
    assert bg.pk not in [s.id for s in ctx.speakers]  # it voted: it does not speak again in this phase


def test_the_ballot_closes_with_the_discussion_and_everything_is_revealed():
    from facilitation.actions.lifecycle import do_stop_discussion
    from facilitation.engine import Synthesis

    room = discussion(make_user(), template="adr")
    a, b, c = speakers(room)
    do_advance_phase(room)
    do_advance_phase(room)
    say(room, a, "VOTE: REJECT the wibblestone plan fails")
    assert votes_document(Room.objects.get(pk=room.pk))["sealed"]
    # The rounds run out: the synthesis closes the ballot and sees every vote.
    Room.objects.filter(pk=room.pk).update(engine_state={**Room.objects.get(pk=room.pk).engine_state, "phase": "synthesis"})
    ctx = load_context(Room.objects.get(pk=room.pk))
    assert ctx.sealed_from is None
    assert "wibblestone" in prompt_text(for_step(ctx, Synthesis("max_rounds"), 30))
    assert not votes_document(Room.objects.get(pk=room.pk))["sealed"]
    do_stop_discussion(room.pk)
    doc = votes_document(Room.objects.get(pk=room.pk))
    assert not doc["sealed"] and doc["tally"]["reject"] == 1


def test_a_background_seat_on_the_offline_model_only_votes(settings):
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.actions.phases import deliberation_settings
    from facilitation.management.inline import drive_inline

    settings.CONVENE = {**settings.CONVENE, "DEFAULT_PROVIDER": "rehearsal"}
    room = make_discussion(make_user(), roles=("participant", "participant", "background"), max_rounds=8,
                           deliberation=deliberation_settings("feature", None))
    with inline():
        do_start_discussion(room)
    room = drive_inline(room.pk)  # explore takes no votes: the background seat is silent
    bg = Seat.objects.get(room=room, role="background")
    assert room.status == "concluded" and not Observation.objects.filter(room=room, seat=bg).exists()
    room = make_discussion(make_user("bob"), roles=("participant", "participant", "background"), max_rounds=8,
                           deliberation=deliberation_settings("feature", None))
    with inline():
        do_start_discussion(room)
    do_advance_phase(Room.objects.get(pk=room.pk))  # shape takes votes
    room = drive_inline(room.pk)
    bg = Seat.objects.get(room=room, role="background")
    said = list(Observation.objects.filter(room=room, seat=bg, kind="contribution"))
    assert said and all([m["type"] for m in t.markers] == ["vote"] for t in said)
    assert all(len(t.content.split()) < 40 for t in said)
