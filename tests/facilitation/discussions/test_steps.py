"""The step runner in-process (inline scheduling) with the scripted model."""
import json
import threading
import time

import pytest

from facilitation.llm import registry as llm_registry
from facilitation.management.inline import drive_inline
from facilitation.runs import calls, leases
from facilitation.runs.models import StepLease
from facilitation.runs.runner import run_step
from facilitation.actions import lifecycle
from facilitation.llm.scripted import ScriptedProvider
from facilitation.runs.scheduling import inline
from facilitation.prompts.instructions import SEAT_ROLES
from rooms.errors import StateConflict
from rooms.models import Invocation, Observation, Room, RoomEvent
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


class Recorder(ScriptedProvider):
    """The scripted model, remembering every request it was given."""

    def __init__(self, rules=None):
        super().__init__(rules)
        self.requests = []

    def complete(self, request):
        self.requests.append(request)
        return super().complete(request)


@pytest.fixture
def model(monkeypatch, settings):
    """Every agent answers through one recording scripted model; retries come without delay."""
    box = {"provider": Recorder()}
    real = llm_registry.get_provider
    monkeypatch.setattr(llm_registry, "get_provider", lambda name: box["provider"] if name == "scripted" else real(name))
    settings.CONVENE = {**settings.CONVENE, "DEFAULT_PROVIDER": "scripted", "RETRY_BACKOFF_SECONDS": 0.0}

    def use(rules):
        box["provider"] = Recorder(rules)
        return box["provider"]

    use.current = lambda: box["provider"]
    return use


def step_of(room) -> int:
    """The room's current step."""
    return leases.current(room.pk).step_seq


def step_in_thread(room):
    """Run the room's current step in another thread (as a worker would); its result lands in ``result["r"]``."""
    result = {}

    def turn():
        from django.db import connection

        with inline():
            result["r"] = run_step(room.pk, step_of(room))
        connection.close()

    thread = threading.Thread(target=turn)
    thread.start()
    return thread, result


def start(room):
    with inline():
        return lifecycle.do_start_discussion(room)


def start_and_open(room):
    """Start the room and commit its opening decision; ``room`` is refreshed for the first turn."""
    start(room)
    room.refresh_from_db()
    with inline():
        assert run_step(room.pk, step_of(room)).outcome == "committed"
    room.refresh_from_db()


@pytest.mark.django_db(transaction=True)
def test_discussion_runs_to_conclusion_with_ordered_events(model, pushed):
    owner = make_user()
    room = make_discussion(owner, max_rounds=3)
    start(room)
    room = drive_inline(room.pk)
    assert room.status == Room.Status.CONCLUDED and room.round == 3
    kinds = list(Observation.objects.filter(room=room).values_list("kind", flat=True))
    # opening, then (turn, evaluation) x 3 where the last evaluation must synthesize, then the synthesis
    assert kinds == ["decision", "contribution", "decision", "contribution", "decision", "contribution", "decision", "synthesis"]
    assert room.conclusion == "Scripted synthesis."
    seqs = list(RoomEvent.objects.filter(room=room).values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    pushed_seqs = [p["seq"] for _, p, _ in pushed if p["discussionId"] == room.pk]
    assert pushed_seqs == seqs
    types = [t for t, _, _ in pushed]
    assert types.count("discussion:turn") == 3 and types.count("discussion:moderator") == 4
    assert types[-2:] == ["discussion:concluded", "discussion:status"]
    last_decision = Observation.objects.filter(room=room, kind="decision").last()
    assert last_decision.data["decision"] == "synthesize"
    assert Invocation.objects.filter(room=room, kind=Invocation.Kind.CALL).count() == 8


def test_roles_and_format_reach_the_prompts(model):
    owner = make_user()
    room = make_discussion(owner, roles=("participant", "devil_advocate", "observer"), max_rounds=4, format="review")
    devil = room.seats.get(role="devil_advocate")
    rec = model([{"purpose": "opening", "text": json.dumps({"decision": "continue", "nextParticipantId": devil.pk, "question": "Break it", "reasoning": "r"})}])
    start(room)
    drive_inline(room.pk)
    asked = [r for r in rec.requests if r.purpose == "contribution"]
    devil_requests = [r for r in asked if r.meta["speaker"]["id"] == devil.pk]
    challenge = SEAT_ROLES["devil_advocate"]
    assert devil_requests and all(challenge in r.system for r in devil_requests)
    assert all("Format: review" in r.system for r in rec.requests)
    others = [r for r in asked if r.meta["speaker"]["id"] != devil.pk]
    assert others and all(challenge not in r.system for r in others)


def test_observers_are_never_chosen_even_when_the_facilitator_asks(model):
    owner = make_user()
    room = make_discussion(owner, roles=("participant", "observer", "participant"), max_rounds=4)
    observer = room.seats.get(role="observer")
    pick_observer = json.dumps({"decision": "continue", "nextParticipantId": observer.pk, "question": "You?", "reasoning": "r"})
    model([{"purpose": "opening", "text": pick_observer}, {"purpose": "evaluation", "text": pick_observer}])
    start(room)
    room = drive_inline(room.pk)
    assert room.status == "concluded"
    assert not Observation.objects.filter(room=room, seat=observer).exists()
    fallbacks = set(Observation.objects.filter(room=room, kind="decision").values_list("data__fallback", flat=True))
    assert "invalid_participant" in fallbacks


def test_unparsable_decisions_fall_back_visibly(model):
    owner = make_user()
    room = make_discussion(owner, max_rounds=2)
    model([{"purpose": "opening", "text": "let us begin"}, {"purpose": "evaluation", "text": "no json here"}])
    start(room)
    room = drive_inline(room.pk)
    decisions = list(Observation.objects.filter(room=room, kind="decision").order_by("seq"))
    assert [d.data["fallback"] for d in decisions] == ["unparsable", "unparsable", "unparsable"]
    assert decisions[0].data["nextParticipantId"] == room.seats.filter(role="participant").order_by("position").first().pk
    assert decisions[-1].data["decision"] == "synthesize"
    assert room.status == "concluded"


def test_timed_out_turn_is_recorded_and_the_discussion_goes_on(model, settings):
    settings.CONVENE = {**settings.CONVENE, "PARTICIPANT_TIMEOUT": 0.4}
    owner = make_user()
    room = make_discussion(owner, max_rounds=2)
    model([{"purpose": "contribution", "round": 0, "delay": 1.5}])
    start(room)
    room = drive_inline(room.pk)
    turns = list(Observation.objects.filter(room=room, kind="contribution").order_by("seq"))
    assert [t.status for t in turns] == ["timed_out", "ok"]
    assert room.status == "concluded"


def test_terminal_error_is_an_error_turn_and_transient_errors_retry(model):
    owner = make_user()
    room = make_discussion(owner, max_rounds=2)
    rec = model([{"purpose": "contribution", "round": 0, "error": "terminal"},
                 {"purpose": "contribution", "round": 1, "error": "transient"}])
    start(room)
    room = drive_inline(room.pk)
    turns = list(Observation.objects.filter(room=room, kind="contribution").order_by("seq"))
    assert [t.status for t in turns] == ["error", "error"]
    transient_calls = [r for r in rec.requests if r.purpose == "contribution" and r.meta["round"] == 1]
    assert len(transient_calls) == calls.MAX_ATTEMPTS
    assert Invocation.objects.filter(room=room, success=False).count() >= calls.MAX_ATTEMPTS
    assert room.status == "concluded"


def test_pause_keeps_next_speaker_and_question_for_resume(model):
    owner = make_user()
    room = make_discussion(owner, max_rounds=3)
    second = room.seats.filter(role="participant").order_by("position").last()
    model([{"purpose": "opening", "text": json.dumps({"decision": "continue", "nextParticipantId": second.pk, "question": "Exactly this?", "reasoning": "r"})}])
    start(room)
    room.refresh_from_db()
    with inline():
        assert run_step(room.pk, step_of(room)).outcome == "committed"  # the opening
        lifecycle.do_pause_discussion(room)
    room.refresh_from_db()
    assert room.status == "paused" and room.engine_state["nextSeatId"] == second.pk
    assert run_step(room.pk, step_of(room)).outcome == "not_claimable"
    with pytest.raises(StateConflict):
        lifecycle.do_pause_discussion(room)
    with inline():
        lifecycle.do_resume_discussion(room)
    room.refresh_from_db()
    with inline():
        run_step(room.pk, step_of(room))
    first_turn = Observation.objects.get(room=room, kind="contribution")
    assert first_turn.seat_id == second.pk
    asked = [r for r in model.current().requests if r.purpose == "contribution"]
    assert asked[0].meta["question"] == "Exactly this?"


@pytest.mark.django_db(transaction=True)
def test_stop_abandons_the_call_in_flight_within_two_seconds(model):
    owner = make_user()
    room = make_discussion(owner, max_rounds=3)
    model([{"purpose": "contribution", "delay": 30}])
    start_and_open(room)
    thread, result = step_in_thread(room)
    time.sleep(0.5)
    stopped_at = time.monotonic()
    lifecycle.do_stop_discussion(room)
    thread.join(5)
    assert not thread.is_alive()
    assert time.monotonic() - stopped_at < 2.0
    assert result["r"].outcome == "abandoned"
    room.refresh_from_db()
    assert room.status == "stopped"
    assert not Observation.objects.filter(room=room, kind="contribution").exists()


def test_conclude_synthesizes_from_what_exists(model):
    owner = make_user()
    room = make_discussion(owner, max_rounds=5)
    start(room)
    room.refresh_from_db()
    with inline():
        run_step(room.pk, step_of(room))
        room.refresh_from_db()
        run_step(room.pk, step_of(room))  # one turn
        lifecycle.do_conclude_discussion(room)
    room = drive_inline(room.pk)
    assert room.status == "concluded" and room.round == 1
    synthesis = Observation.objects.get(room=room, kind="synthesis")
    assert synthesis.data["reason"] == "forced"
    with pytest.raises(StateConflict):
        lifecycle.do_conclude_discussion(room)


def test_room_budget_leads_to_synthesis_and_agent_budget_passes_turn(model):
    owner = make_user()
    room = make_discussion(owner, max_rounds=5)
    Room.objects.filter(pk=room.pk).update(budget_tokens=7000)
    first = room.seats.filter(role="participant").order_by("position").first()
    first.agent.budget_tokens = 10
    first.agent.save()
    start(room)
    room = drive_inline(room.pk)
    assert room.status == "concluded" and room.round < 5
    assert Observation.objects.get(room=room, kind="synthesis").data["reason"] == "budget"
    passed = Observation.objects.filter(room=room, seat=first, kind="contribution").first()
    assert passed is not None and passed.status == "error" and "budget" in passed.content
    calls = Invocation.objects.filter(room=room, kind=Invocation.Kind.CALL)
    assert all(c.input_tokens > 0 for c in calls if c.success)


def test_a_step_commits_once_however_often_it_runs(model):
    owner = make_user()
    room = make_discussion(owner, max_rounds=2)
    start(room)
    step = step_of(room)
    with inline():
        assert run_step(room.pk, step).outcome == "committed"
        assert run_step(room.pk, step).outcome == "not_claimable"
    assert Observation.objects.filter(room=room).count() == 1


def test_a_call_that_lost_its_lease_is_not_committed(model):
    from datetime import timedelta

    from django.utils import timezone

    from facilitation.actions import steps

    owner = make_user()
    room = make_discussion(owner, max_rounds=2)
    start(room)
    first, _ = leases.claim_step(room.pk, step_of(room), 60)
    # The lease runs out (a stuck worker) and another worker claims the same step.
    StepLease.objects.filter(room=room).update(lease_until=timezone.now() - timedelta(seconds=1))
    second, claimed_room = leases.claim_step(room.pk, step_of(room), 60)
    assert second.attempt == 2 and claimed_room.pk == room.pk
    assert StepLease.objects.get(room=room, slot=0).token == second.token
    from facilitation.engine import Decision

    assert steps.commit_decision(first, Decision("continue", None, "q", "r"), None, None, "F", "scripted") is False
    assert steps.commit_decision(second, Decision("continue", room.seats.filter(role="participant").first().pk, "q", "r"), None, None, "F", "scripted")
    assert Observation.objects.filter(room=room).count() == 1


def test_usd_budget_uses_the_price_table_and_records_cost(model, settings):
    settings.LLM_PRICES = {**settings.LLM_PRICES, "scripted": {"input": 1000.0, "output": 1000.0, "cache_write": 0, "cache_read": 0}}
    owner = make_user()
    room = make_discussion(owner, max_rounds=5)
    Room.objects.filter(pk=room.pk).update(budget_usd="2.0")
    start(room)
    room = drive_inline(room.pk)
    assert room.status == "concluded" and room.round < 5
    assert Observation.objects.get(room=room, kind="synthesis").data["reason"] == "budget"
    calls = list(Invocation.objects.filter(room=room, kind=Invocation.Kind.CALL, success=True))
    assert calls and all(c.cost_usd > 0 for c in calls)
    assert float(room.cost_usd) == pytest.approx(float(sum(c.cost_usd for c in calls)))
    assert float(room.cost_usd) <= 2.0


@pytest.mark.django_db(transaction=True)
def test_pause_during_a_call_lets_the_step_commit_and_resume_goes_on(model):
    owner = make_user()
    room = make_discussion(owner, max_rounds=2)
    model([{"purpose": "contribution", "round": 0, "delay": 1.2}])
    start_and_open(room)
    thread, result = step_in_thread(room)
    time.sleep(0.3)
    with inline():
        lifecycle.do_pause_discussion(room)
    thread.join(5)
    assert result["r"].outcome == "committed"
    room.refresh_from_db()
    assert room.status == "paused" and room.round == 1
    with inline():
        lifecycle.do_resume_discussion(room)
    room = drive_inline(room.pk)
    assert room.status == "concluded" and room.round == 2


@pytest.mark.django_db(transaction=True)
def test_a_comment_during_a_model_call_comes_before_that_turn_and_reaches_the_next_prompt(model):
    """A person speaks while a participant's model call runs: the comment is committed at once (the
    next seq), the turn in flight still commits, after it, and the facilitator's next prompt has both."""
    from facilitation.actions.comments import do_post_comment
    from facilitation.llm.base import prompt_text

    owner = make_user()
    room = make_discussion(owner, max_rounds=3)
    recorder = model([{"purpose": "contribution", "round": 0, "delay": 1.0}])
    start_and_open(room)
    thread, result = step_in_thread(room)
    time.sleep(0.3)
    comment = do_post_comment(room.pk, owner, "Please weigh the running cost too.")
    thread.join(5)
    assert result["r"].outcome == "committed"
    turns = list(Observation.objects.filter(room=room, kind="contribution").order_by("seq"))
    assert [t.author_kind for t in turns] == ["human", "agent"]  # in the order they were committed
    assert turns[0].pk == comment.pk and turns[1].seq == comment.seq + 1
    assert "running cost" not in prompt_text(recorder.requests[-1])  # the turn's prompt was built before the comment
    room.refresh_from_db()
    with inline():
        assert run_step(room.pk, step_of(room)).outcome == "committed"  # the facilitator's evaluation
    evaluation = prompt_text(recorder.requests[-1])
    assert "running cost" in evaluation and evaluation.index("running cost") < evaluation.rindex(turns[1].content[:40])
