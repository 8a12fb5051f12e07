"""Workspace rounds on the shared step mechanism: the registry knows them, each agent's slot and each
narrative commit once however often their task runs, and a dead worker's slot is taken over."""
from datetime import timedelta

import pytest
from django.utils import timezone

from facilitation.runs import leases, registry, scheduling, sweeper
from facilitation.runs.models import StepLease
from facilitation.runs.registry import StepRun
from facilitation.runs.runner import lease_seconds, run_step
from facilitation.runs.scheduling import inline
from facilitation.workspace import rounds, steps
from facilitation.workspace.actions.lifecycle import (
    do_archive_workspace, do_complete_workspace, do_pause_workspace, do_resume_workspace, do_start_workspace,
)
from facilitation.workspace.actions.observations import do_post_observation
from facilitation.workspace.actions.rounds import do_end_round
from rooms.models import Invocation, Narrative, Observation, Room, Turn
from tests.factories import make_user
from tests.workspace.helpers import agent_seats, clock_slot, make_workspace, run_round_work


@pytest.fixture
def manager(db):
    return make_user("stepper")


def typed(room, **filters):
    return Observation.objects.filter(room=room, **filters).exclude(event_type="")


def works(room, **filters):
    return Invocation.objects.filter(room=room, component="agent.round_work", **filters)


def _claim(room, step_seq, slot):
    """What a worker holds after claiming a slot (and before it commits)."""
    claim, claimed_room = leases.claim_step(room.pk, step_seq, lease_seconds(), slot)
    step = registry.slot_step(steps.plan(claimed_room).step, claim.slot, claim.slots)
    return StepRun(claim=claim, room=claimed_room, step=step, lease=lease_seconds())


def _worked_round(manager, agents: int = 2) -> Room:
    """A started workspace whose agents have done round 1's work (inline)."""
    room = make_workspace(manager, agents=agents)
    do_start_workspace(room, manager)
    run_round_work(room)
    return room


def _expire(room, slot):
    StepLease.objects.filter(room=room, slot=slot).update(lease_until=timezone.now() - timedelta(seconds=1))


def test_the_app_registers_the_workspace_planner_and_step_kinds():
    known = registry.registered()
    assert "workspace" in known["planners"]
    assert {"workspace.agent", "workspace.clock", "workspace.narrative"} <= set(known["handlers"])
    assert "discussion" in known["planners"]  # next to the discussions'


def test_a_round_is_one_step_with_a_slot_per_agent_and_one_for_its_clock(manager):
    with inline():
        room = make_workspace(manager, agents=3, turn_policy={"maxEvents": 50, "maxSeconds": 120})
        do_start_workspace(room, manager)
    step = leases.current(room.pk)
    assert step.slots == 4
    rows = {lease.slot: lease for lease in StepLease.objects.filter(room=room)}
    assert all(rows[s].ready_at <= timezone.now() for s in range(3))
    assert 115 <= (rows[3].ready_at - timezone.now()).total_seconds() <= 120
    room = Room.objects.get(pk=room.pk)
    kinds = [steps.plan(room).step.for_slot(s, 4) for s in range(4)]
    assert [k.kind for k in kinds] == ["workspace.agent"] * 3 + ["workspace.clock"]
    assert [k.seat_id for k in kinds[:3]] == [s.pk for s in agent_seats(room)]


def test_an_agent_step_run_twice_commits_once(manager):
    with inline():
        room = make_workspace(manager, agents=2)
        do_start_workspace(room, manager)
        step_seq = leases.current(room.pk).step_seq
        seat = agent_seats(room)[0]
        first = run_step(room.pk, step_seq, slot=0)
        again = run_step(room.pk, step_seq, slot=0)  # the same task delivered a second time
    assert (first.step, first.outcome) == ("workspace.agent", "committed")
    assert again.outcome == "not_claimable"
    assert typed(room, seat=seat).count() == 2  # the rehearsal model's two observations, once
    assert works(room, input__seatId=seat.pk).count() == 1


def _during_the_call(monkeypatch, what):
    """Do ``what()`` while the next agent's model call runs (once)."""
    real = rounds.call_provider
    pending = [what]

    def call(provider, request, timeout, should_abandon):
        called = real(provider, request, timeout, should_abandon)
        if pending:
            pending.pop()()
        return called

    monkeypatch.setattr(rounds, "call_provider", call)


def test_an_agent_step_whose_lease_was_taken_over_writes_nothing(manager, monkeypatch):
    """Two workers run the same seat: the first stalls past its lease during its model call, the second
    takes the slot over and commits; the first one's late commit is discarded (its call's invocation is
    kept, marked discarded)."""
    with inline():
        room = make_workspace(manager, agents=2)
        do_start_workspace(room, manager)
        step_seq = leases.current(room.pk).step_seq
        seat = agent_seats(room)[1]
        stalled = _claim(room, step_seq, 1)

        def taken_over():
            _expire(room, 1)
            assert run_step(room.pk, step_seq, slot=1).outcome == "committed"

        _during_the_call(monkeypatch, taken_over)
        late = steps.run_agent(stalled)
    assert late.outcome == "lost_lease"
    assert typed(room, seat=seat).count() == 2
    rows = list(works(room, input__seatId=seat.pk).values_list("success", "error"))
    assert len(rows) == 2 and sum(1 for _, error in rows if error.startswith("discarded")) == 1


def test_a_claimed_slot_of_a_dead_worker_is_taken_over_by_the_sweeper(manager, monkeypatch):
    with inline():
        room = make_workspace(manager, agents=3)
        do_start_workspace(room, manager)
        step_seq = leases.current(room.pk).step_seq
        run_step(room.pk, step_seq, slot=0)
        _claim(room, step_seq, 2)  # a worker claims seat 3's slot, then dies: no heartbeat, no commit
        assert sweeper.sweep(stale_seconds=15) == 0  # its lease still runs; slot 1 was just made ready
        _expire(room, 2)
        sent = []
        monkeypatch.setattr(scheduling, "send_step", lambda *args, **kwargs: sent.append((args, kwargs)))
        assert sweeper.sweep(stale_seconds=15) == 1
        assert sent == [((room.pk, step_seq), {"slot": 2})]
        taken = run_step(room.pk, step_seq, slot=2)
    assert (taken.step, taken.outcome) == ("workspace.agent", "committed")
    assert StepLease.objects.get(room=room, slot=2).done
    assert typed(room, seat=agent_seats(room)[2]).count() == 2
    assert not StepLease.objects.filter(room=room, slot=3, done=True).exists()  # the clock still runs


def test_the_narrative_is_written_once_however_often_the_close_runs(manager):
    with inline():
        room = _worked_round(manager)
        do_end_round(room, manager)
        close_seq = leases.current(room.pk).step_seq
        assert leases.current(room.pk).slots == 1
        assert steps.plan(Room.objects.get(pk=room.pk)).step.kind == "workspace.narrative"
        stalled = _claim(room, close_seq, 0)
        _expire(room, 0)
        assert run_step(room.pk, close_seq).outcome == "committed"
        assert run_step(room.pk, close_seq).outcome == "not_claimable"  # delivered again
        assert steps.run_close(stalled).outcome == "lost_lease"  # the worker that lost its lease
    assert Narrative.objects.filter(room=room, round=1).count() == 1
    assert Invocation.objects.filter(room=room, component="narrative.generate").count() == 1
    # Round 2's step opened with the narrative: its agents and its clock.
    step = leases.current(room.pk)
    assert step.step_seq == close_seq + 1 and step.slots == 3


def test_a_narrative_call_whose_lease_was_lost_is_kept_and_counted(manager, monkeypatch, settings):
    """The close's worker loses its lease during its model call and another worker writes the narrative: the first
    call cost something all the same, so its invocation is kept, marked discarded, and its usage counted, once.
    Every call's invocation holds its cost, so the workspace's spend is the sum of its invocations'."""
    settings.LLM_PRICES = {"rehearsal": {"input": 3.0, "output": 15.0, "cache_write": 0.0, "cache_read": 0.0}}
    with inline():
        room = _worked_round(manager)
        do_end_round(room, manager)
        close_seq = leases.current(room.pk).step_seq
        slow = _claim(room, close_seq, 0)

        def taken_over():
            _expire(room, 0)
            assert run_step(room.pk, close_seq).outcome == "committed"  # another worker writes the narrative

        _during_the_call(monkeypatch, taken_over)
        assert steps.run_close(slow).outcome == "lost_lease"
    assert Narrative.objects.filter(room=room, round=1).count() == 1
    generated = Invocation.objects.filter(room=room, component="narrative.generate")
    assert generated.exclude(error__startswith="discarded").count() == 1
    (lost,) = generated.filter(error__startswith="discarded")
    assert not lost.success and lost.input["attempt"] == slow.claim.attempt and lost.input_tokens > 0
    room.refresh_from_db()
    assert room.tokens_used == sum(i.input_tokens + i.output_tokens for i in Invocation.objects.filter(room=room))
    assert lost.cost_usd > 0 and room.cost_usd == sum(i.cost_usd for i in Invocation.objects.filter(room=room))


def test_ending_the_round_takes_the_slots_of_agents_still_at_work(manager, monkeypatch):
    with inline():
        room = make_workspace(manager, agents=2)
        do_start_workspace(room, manager)
        step_seq = leases.current(room.pk).step_seq
        busy = _claim(room, step_seq, 0)
        _during_the_call(monkeypatch, lambda: do_end_round(room, manager))
        assert steps.run_agent(busy).outcome == "lost_lease"
        assert busy.abandoned()  # a call still in flight would have given up at its next check
    assert typed(room, round=1).count() == 0
    assert works(room, error__startswith="discarded").count() == 1
    assert steps.plan(Room.objects.get(pk=room.pk)).step.kind == "workspace.narrative"


def test_a_narrative_is_written_while_paused_and_the_next_round_waits_for_the_resume(
        manager, monkeypatch, django_capture_on_commit_callbacks):
    with inline():
        room = _worked_round(manager)
        do_pause_workspace(room, manager)
        do_end_round(room, manager)
        ran = run_round_work(room)
    assert [(r.step, r.outcome) for r in ran] == [("workspace.narrative", "committed")]
    assert works(room, input__round=2).count() == 0  # paused: round 2's agents have not started
    sent = []
    monkeypatch.setattr(scheduling, "send_step", lambda room_id, seq, countdown=None, slot=0: sent.append((slot, countdown)))
    with django_capture_on_commit_callbacks(execute=True):
        do_resume_workspace(room, manager)  # sent to the workers (not inline)
    _, clock = clock_slot(room)
    assert sorted(slot for slot, _ in sent) == [0, 1, 2] and dict(sent)[clock] == pytest.approx(300, abs=2)
    ran = run_round_work(room)
    assert [r.outcome for r in ran] == ["committed", "committed"]
    assert all(w.input["narrative"]["round"] == 1 for w in works(room, input__round=2))


def test_the_last_ended_round_gets_its_narrative_after_the_scope_closed(manager):
    with inline():
        room = _worked_round(manager)
        do_end_round(room, manager)
        do_complete_workspace(room, manager)
        ran = run_round_work(room)
    assert [(r.step, r.outcome) for r in ran] == [("workspace.narrative", "committed")]
    assert Narrative.objects.filter(room=room, round=1).count() == 1
    assert Room.objects.get(pk=room.pk).status == Room.Status.COMPLETED
    assert Turn.objects.get(room=room, number=2).ended_by == Turn.EndedBy.SCOPE
    assert steps.plan(Room.objects.get(pk=room.pk)) is None  # nothing more to run


def test_the_round_the_scope_closes_gets_its_narrative_when_it_has_observations(manager):
    with inline():
        room = _worked_round(manager)
        assert typed(room, round=1).exists()
        do_complete_workspace(room, manager)
        ran = run_round_work(room)
    assert [(r.step, r.outcome) for r in ran] == [("workspace.narrative", "committed")]
    narrative = Narrative.objects.get(room=room, round=1)
    assert narrative.generated_content and narrative.provider == "rehearsal"
    assert Turn.objects.get(room=room, number=1).ended_by == Turn.EndedBy.SCOPE
    assert Room.objects.get(pk=room.pk).status == Room.Status.COMPLETED
    assert Invocation.objects.filter(room=room, component="narrative.generate", input__round=1).count() == 1
    assert steps.plan(Room.objects.get(pk=room.pk)) is None
    with inline():
        assert run_round_work(room) == []  # written once


def test_a_pending_close_and_the_round_the_scope_closes_both_get_their_narratives(manager):
    with inline():
        room = _worked_round(manager)
        do_end_round(room, manager)  # round 1's close waits for a worker
        do_post_observation(room, manager, event_type="decision", content="Ship the outbox first.")
        do_archive_workspace(room, manager)  # closes round 2, which has an observation
        ran = run_round_work(room)
    assert [(r.step, r.outcome) for r in ran] == [("workspace.narrative", "committed")] * 2
    assert sorted(Narrative.objects.filter(room=room).values_list("round", flat=True)) == [1, 2]
    assert Room.objects.get(pk=room.pk).status == Room.Status.ARCHIVED


def test_a_round_the_scope_closes_without_observations_gets_no_narrative(manager):
    with inline():
        room = make_workspace(manager, agents=2)
        do_start_workspace(room, manager)
        do_complete_workspace(room, manager)  # before any agent worked
        run_round_work(room)
    assert not Narrative.objects.filter(room=room).exists()
    assert steps.plan(Room.objects.get(pk=room.pk)) is None


def test_a_workspace_running_before_the_upgrade_gets_its_current_step(manager):
    """The data migration: workspaces started on the old per-workspace tasks had no step rows."""
    from importlib import import_module

    from django.apps import apps

    migration = import_module("facilitation.migrations.0002_workspace_round_steps")
    with inline():
        room = make_workspace(manager, agents=2)
        do_start_workspace(room, manager)
        run_step(room.pk, leases.current(room.pk).step_seq, slot=0)  # one seat wrote its round already
        ended = make_workspace(manager, agents=2, name="Waiting for its narrative")
        do_start_workspace(ended, manager)
        do_end_round(ended, manager)
    StepLease.objects.filter(room__in=(room, ended)).delete()
    migration.open_current_steps(apps, None)
    assert leases.current(room.pk).slots == 3 and leases.current(ended.pk).slots == 1
    ran = run_round_work(room)
    assert sorted(r.outcome for r in ran) == ["committed", "skipped"]  # the written seat is not written again
    assert typed(room, round=1).count() == 4
    assert [(r.step, r.outcome) for r in run_round_work(ended)][0] == ("workspace.narrative", "committed")


class _Flaky:
    """The rehearsal model behind a rate limit: the first ``failures`` calls of ``purpose`` answer 429."""

    def __init__(self, failures: int, purpose: str):
        from facilitation.llm.rehearsal import RehearsalProvider

        self.real, self.left, self.purpose, self.name = RehearsalProvider(), failures, purpose, "flaky"

    def complete(self, request):
        from facilitation.llm import TransientLLMError

        if request.purpose == self.purpose and self.left > 0:
            self.left -= 1
            raise TransientLLMError("rate limited (429)", provider=self.name, status=429)
        return self.real.complete(request)


def _rate_limited_workspace(manager, monkeypatch, failures: int):
    """A started workspace of one agent whose first ``failures`` calls are refused with a 429 (inside ``inline()``);
    the room and its round's step."""
    room = make_workspace(manager, agents=1)
    do_start_workspace(room, manager)
    purpose = rounds.prepare_agent(Room.objects.get(pk=room.pk), 1, agent_seats(room)[0].pk, 5).request.purpose
    flaky = _Flaky(failures, purpose)
    monkeypatch.setattr(rounds, "provider_for", lambda name="": flaky)
    return room, leases.current(room.pk).step_seq


def test_a_rate_limited_agent_runs_again_later_and_its_work_is_written_once(manager, monkeypatch, settings):
    settings.CONVENE = {**settings.CONVENE, "RETRY_BACKOFF_SECONDS": 1.0}
    with inline():
        room, step_seq = _rate_limited_workspace(manager, monkeypatch, failures=1)
        seat = agent_seats(room)[0]
        first = run_step(room.pk, step_seq, slot=0)
        assert (first.outcome, first.step) == ("retry", "workspace.agent") and 0 < first.retry_in <= 2
        assert typed(room, seat=seat).count() == 0  # nothing written for the failed call but its invocation
        second = run_step(room.pk, step_seq, slot=0)  # the retry
    assert second.outcome == "committed"
    assert typed(room, seat=seat).count() == 2
    rows = list(works(room, input__seatId=seat.pk).order_by("id").values_list("success", "error"))
    assert len(rows) == 2 and rows[0][1].startswith("discarded: transient: rate limited") and rows[1] == (True, "")
    assert StepLease.objects.get(room=room, slot=0).attempt == 2


def test_a_rate_limited_calls_invocation_is_kept_in_its_rounds_chain(manager, monkeypatch):
    """The call made again keeps its invocation in the round's correlation (as the seat's round work is), naming
    the seat and the model, marked discarded, with nothing used."""
    with inline():
        room, step_seq = _rate_limited_workspace(manager, monkeypatch, failures=1)
        assert run_step(room.pk, step_seq, slot=0).outcome == "retry"
    seat, turn = agent_seats(room)[0], Turn.objects.get(room=room, number=1)
    call = works(room).get()
    assert (call.correlation_id, call.input, call.provider, call.success) == (
        turn.correlation_id, {"round": 1, "seatId": seat.pk}, "flaky", False)
    assert call.error.startswith("discarded: transient: rate limited") and call.error.endswith("; the step runs again")
    assert (call.input_tokens, call.output_tokens, call.cost_usd, call.output) == (0, 0, 0, "")
    assert Room.objects.get(pk=room.pk).tokens_used == 0


def test_an_agent_still_rate_limited_after_its_attempts_commits_the_failure(manager, monkeypatch):
    with inline():
        room, step_seq = _rate_limited_workspace(manager, monkeypatch, failures=10)
        outcomes = [run_step(room.pk, step_seq, slot=0).outcome for _ in range(4)]
    assert outcomes == ["retry", "retry", "committed", "not_claimable"]
    seat = agent_seats(room)[0]
    last = works(room, input__seatId=seat.pk).order_by("id").last()
    assert not last.success and "rate limited" in last.error and not last.error.startswith("discarded")


def test_a_rate_limited_narrative_is_written_on_the_next_attempt(manager, monkeypatch):
    with inline():
        room = _worked_round(manager, agents=1)
        do_end_round(room, manager)
        close_seq = leases.current(room.pk).step_seq
        work = rounds.prepare_close(Room.objects.get(pk=room.pk), 1, 5)
        flaky = _Flaky(1, work.request.purpose)
        monkeypatch.setattr(rounds, "provider_for", lambda name="": flaky)
        assert run_step(room.pk, close_seq).outcome == "retry"
        assert not Narrative.objects.filter(room=room, round=1).exists()
        assert run_step(room.pk, close_seq).outcome == "committed"
    assert Narrative.objects.filter(room=room, round=1).count() == 1
    rows = list(Invocation.objects.filter(room=room, component="narrative.generate").order_by("id")
                .values_list("success", "error", "correlation_id"))
    assert len(rows) == 2 and rows[0][1].startswith("discarded: transient") and rows[1][0]
    assert {row[2] for row in rows} == {Turn.objects.get(room=room, number=1).correlation_id}  # the round's chain


def test_the_sweeper_hands_out_a_paused_rooms_narrative_but_not_its_next_round(manager, monkeypatch):
    """The manager pauses to review the narrative; the worker writing it dies. The sweeper sends the
    narrative again though the room is paused; the next round's agents wait for the resume."""
    sent = []
    with inline():
        room = _worked_round(manager)
        do_pause_workspace(room, manager)
        do_end_round(room, manager)
        close_seq = leases.current(room.pk).step_seq
        # A worker claims the narrative (a workspace's steps are claimed in any status), then dies.
        assert leases.claim_step(room.pk, close_seq, lease_seconds(), 0, may_run=lambda r: True) is not None
        monkeypatch.setattr(scheduling, "send_step", lambda room_id, seq, countdown=None, slot=0: sent.append((room_id, seq, slot)))
        assert sweeper.sweep(stale_seconds=15) == 0  # its lease still runs
        _expire(room, 0)
        assert sweeper.sweep(stale_seconds=15) == 1
        assert sent == [(room.pk, close_seq, 0)]
        assert run_step(room.pk, close_seq).outcome == "committed"
        assert Narrative.objects.filter(room=room, round=1).count() == 1
        # Round 2's agents and clock are ready, forgotten for a minute: still not sent while paused.
        StepLease.objects.filter(room=room).update(ready_at=timezone.now() - timedelta(minutes=1))
        sent.clear()
        assert sweeper.sweep(stale_seconds=15) == 0 and sent == []
