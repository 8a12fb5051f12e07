"""Bounded parallel turns: several seats asked at once run on up to ``maxParallel`` slots of one step,
and their turns are committed exactly once each, in the facilitator's order, whatever happens to a worker."""
import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from facilitation.actions.comments import do_post_comment
from facilitation.actions.lifecycle import do_stop_discussion
from facilitation.actions.phases import deliberation_settings, do_advance_phase
from facilitation.context import load_context
from facilitation.discussions.steps import together_for
from facilitation.engine import Decision
from facilitation.runs import leases
from facilitation.runs.models import StepLease
from facilitation.runs.runner import run_step
from facilitation.runs.scheduling import inline
from rooms.models import Invocation, Observation, Room
from tests.facilitation.discussions.test_phases import discussion, speakers
from tests.facilitation.discussions.test_steps import model, start_and_open  # noqa: F401 (a fixture)
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db
SAYS = [{"purpose": "contribution", "text": "{speaker} answers: one line."}]


def _step(room, slot=0):
    with inline():
        return run_step(room.pk, leases.current(room.pk).step_seq, slot=slot).outcome


def _asked_all(model_rules, max_parallel=3, seats=4):
    """A running room whose facilitator has just asked every seat but the last speaker at once (``@all``)."""
    owner = make_user()
    room = make_discussion(owner, roles=("participant",) * seats, max_rounds=10,
                           deliberation=deliberation_settings(None, None, max_parallel))
    model_rules(SAYS)
    start_and_open(room)
    assert _step(room) == "committed"  # the first speaker's turn
    do_post_comment(room.pk, owner, "Before we go on: @all, one line each please.")
    assert _step(room) == "committed"  # the evaluation: everyone else at once
    room.refresh_from_db()
    return room


def _contributions(room):
    return list(Observation.objects.filter(room=room, kind="contribution", author_kind="agent").order_by("seq"))


def test_asked_together_the_turns_commit_once_each_in_order_after_a_worker_dies(model):  # noqa: F811
    room = _asked_all(model)
    a, b, c, d = speakers(room)
    decision = Observation.objects.filter(room=room, kind="decision").latest("seq").data
    assert decision["together"] == [b.pk, c.pk, d.pk] and decision["nextParticipantId"] == b.pk
    step = leases.current(room.pk)
    assert step.slots == 3 and room.engine_state["phase"] == "parallel"
    before = len(_contributions(room))
    assert _step(room, slot=2) == "committed"  # d answers first: kept aside, not yet in the transcript
    assert len(_contributions(room)) == before and list(Room.objects.get(pk=room.pk).engine_state["staged"]) == ["2"]
    # The worker running slot 1 dies holding its lease.
    claim, _ = leases.claim_step(room.pk, step.step_seq, 60, slot=1)
    assert _step(room, slot=0) == "committed"  # b
    assert _step(room, slot=1) == "not_claimable"  # the dead worker's lease still holds
    assert len(_contributions(room)) == before
    StepLease.objects.filter(room=room, slot=1).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert (room.pk, step.step_seq, 1) in leases.stranded(60)  # the sweeper sends it again
    assert _step(room, slot=1) == "committed"  # c, on another worker: the last one writes all three
    turns = _contributions(room)[before:]
    assert [t.seat_id for t in turns] == [b.pk, c.pk, d.pk]  # the facilitator's order, not the order they answered
    assert [t.content for t in turns] == [f"{s.agent.name} answers: one line." for s in (b, c, d)]
    assert [t.seq for t in turns] == list(range(turns[0].seq, turns[0].seq + 3))
    first_round = turns[0].round
    assert [t.round for t in turns] == [first_round, first_round + 1, first_round + 2]
    room.refresh_from_db()
    assert room.round == turns[-1].round and room.engine_state["phase"] == "evaluation"
    assert room.engine_state["staged"] == {} and room.engine_state["lastSeatId"] == d.pk
    # Exactly once: the old step's slots cannot run again, and each seat has one turn and one call.
    for slot in range(3):
        with inline():
            assert run_step(room.pk, step.step_seq, slot=slot).outcome == "not_claimable"
    assert leases.current(room.pk).slots == 1 and leases.current(room.pk).step_seq == step.step_seq + 1
    assert [Observation.objects.filter(room=room, seat=s, kind="contribution").count() for s in (a, b, c, d)] == [1, 1, 1, 1]
    calls = Invocation.objects.filter(room=room, component="participant.turn", success=True)
    assert calls.count() == 4 and claim.slot == 1
    # The evaluation after them sees every answer.
    assert _step(room) == "committed"
    assert Observation.objects.filter(room=room).latest("seq").kind == "decision"


def test_at_most_max_parallel_calls_run_at_the_same_time(model):  # noqa: F811
    room = _asked_all(model, max_parallel=2)
    a, b, c, d = speakers(room)
    assert Observation.objects.filter(room=room, kind="decision").latest("seq").data["together"] == [b.pk, c.pk]
    assert leases.current(room.pk).slots == 2


@pytest.mark.django_db(transaction=True)
def test_the_slots_run_at_the_same_time_on_separate_workers(model):  # noqa: F811
    room = _asked_all(model)
    active, peak, lock = [0], [0], threading.Lock()
    recorder = model(SAYS)  # the model every worker calls, slowed down and watched
    answer = recorder.complete

    def slow(request):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.4)
        with lock:
            active[0] -= 1
        return answer(request)

    recorder.complete = slow
    step = leases.current(room.pk)
    results = {}

    def work(slot):
        from django.db import connection

        with inline():
            results[slot] = run_step(room.pk, step.step_seq, slot=slot).outcome
        connection.close()

    threads = [threading.Thread(target=work, args=(slot,)) for slot in range(step.slots)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == {0: "committed", 1: "committed", 2: "committed"}
    assert peak[0] == 3  # the three calls of 0.4 s were in flight together
    a, b, c, d = speakers(room)
    assert [t.seat_id for t in _contributions(room)[-3:]] == [b.pk, c.pk, d.pk]


def test_stop_cancels_every_parallel_turn(model):  # noqa: F811
    room = _asked_all(model)
    step = leases.current(room.pk)
    before = len(_contributions(room))
    assert _step(room, slot=0) == "committed"
    do_stop_discussion(room.pk)
    for slot in (1, 2):
        with inline():
            assert run_step(room.pk, step.step_seq, slot=slot).outcome == "not_claimable"
    room.refresh_from_db()
    assert room.status == "stopped" and len(_contributions(room)) == before


def test_an_open_ballot_asks_the_voters_together():
    room = discussion(make_user(), template="adr")
    Room.objects.filter(pk=room.pk).update(max_parallel=3)
    a, b, c = speakers(room)
    do_advance_phase(room)
    do_advance_phase(room)
    ctx = load_context(Room.objects.get(pk=room.pk))
    assert ctx.sealed_from is not None and ctx.max_parallel == 3
    assert together_for(ctx, Decision("continue", b.pk, "Your vote?", ""), False) == (b.pk, a.pk, c.pk)
    assert together_for(ctx, Decision("synthesize", None, "", ""), False) == ()
    Room.objects.filter(pk=room.pk).update(max_parallel=1)
    assert together_for(load_context(Room.objects.get(pk=room.pk)), Decision("continue", b.pk, "?", ""), False) == ()


@pytest.mark.worker
def test_a_killed_worker_loses_and_doubles_no_parallel_turn(stack_factory, tmp_path):
    """Real workers: a brainstorm opens with every seat at once (3 slots); the worker dies mid-calls."""
    import os
    import signal

    from facilitation.actions.lifecycle import do_start_discussion
    from tests.facilitation.runs.test_worker_path import assert_clean_transcript, finished, slow_scripted_env
    from tests.waiting import wait_for

    env = slow_scripted_env(tmp_path, turn_seconds=2.0, timeout=6)
    first = stack_factory(extra_env=env, supervise=False)
    room = make_discussion(make_user(), roles=("participant",) * 3, max_rounds=4, format="brainstorm",
                           deliberation=deliberation_settings(None, None, 3))
    do_start_discussion(room)

    def calls_under_way():
        r = Room.objects.get(pk=room.pk)
        return r.engine_state.get("phase") == "parallel" and StepLease.objects.filter(room=r, done=False).exclude(token="").count() >= 2

    wait_for(calls_under_way, timeout=30, interval=0.05)
    time.sleep(0.5)  # the model calls are under way
    worker = first.procs["worker"]
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    assert not Observation.objects.filter(room=room, kind="contribution").exists()
    stack_factory(beat=True, extra_env=env)  # a new worker and the beat sweeper, same Redis and database
    room = wait_for(lambda: finished(room.pk), timeout=90)
    assert room.status == "concluded" and room.round == 4
    assert_clean_transcript(room)
    together = Observation.objects.filter(room=room, kind="decision").order_by("seq").first().data["together"]
    assert together == [s.pk for s in speakers(room)]
    turns = list(Observation.objects.filter(room=room, kind="contribution").order_by("seq"))
    assert [t.seat_id for t in turns[:3]] == together  # in the facilitator's order
    assert Invocation.objects.filter(room=room, component="participant.turn", success=True).count() == 4


def test_turns_asked_together_count_each_others_calls_against_the_room_s_budget(model):  # noqa: F811
    """Two of the three turns are in flight with their needs kept on their leases; the third finds the budget
    would not cover all three and makes no call (each alone would fit)."""
    room = _asked_all(model)
    recorder = model.current()
    step = leases.current(room.pk)
    held = [leases.claim_step(room.pk, step.step_seq, 60.0, slot)[0] for slot in (0, 1)]
    need = (1000, 0.0)
    for claim in held:
        assert leases.reserve(claim, need) is True
    room.refresh_from_db()
    Room.objects.filter(pk=room.pk).update(budget_tokens=room.tokens_used + 2 * need[0] + 900)
    calls = len(recorder.requests)
    assert _step(room, slot=2) == "committed"
    assert len(recorder.requests) == calls  # no call for the third turn
    state = Room.objects.get(pk=room.pk).engine_state
    assert state["staged"]["2"]["content"] == "The room's budget is used up." and state["staged"]["2"]["status"] == "error"
