"""How a workspace's rounds run on the step mechanism every room kind shares (``facilitation.runs``).

``register()`` (called at app start) tells the registry that rooms of kind ``workspace`` are
planned by ``plan`` and which handler runs each step kind:

- a round (``RoundStep``) is one step with one slot per agent seat, all working at once, and a
  last slot for the round's clock: ``workspace.agent`` (the seat's context, its model call, its
  observations and task steps committed once) and ``workspace.clock`` (ready after
  ``turnPolicy.maxSeconds``: it ends the round if it is still open);
- a round's close (``RoundClose``, one slot): ``workspace.narrative`` learns each seat's adaptation,
  has the moderator agent write the narrative once, and opens the next round's step. It also runs
  while the room is paused (the manager reviews the narrative before the next round) and after the
  scope closed (the last ended round still gets its narrative).

Claims, heartbeats, the sweeper and the Celery task (``facilitation.run_step``) are the runner's,
the same as for a discussion's turns.
"""
from dataclasses import dataclass

from facilitation.actions.steps import CallRecord, record_discarded_call
from facilitation.runs import registry
from facilitation.runs.calls import again_later, timeouts
from facilitation.runs.leases import ACTIVE
from facilitation.runs.registry import Planned, StepResult, StepRun
from facilitation.workspace import rounds
from facilitation.workspace.actions.rounds import agent_seats, closing_round, end_round_on_timeout, narrative_pending
from facilitation.workspace.rules import current_turn
from rooms.models import Room

ROOM_KIND = "workspace"
S = Room.Status
EVERY_STATUS = (S.ACTIVE, S.PAUSED, S.COMPLETED, S.ARCHIVED)


@dataclass(frozen=True)
class AgentWork:
    """One agent seat's part of a round (``seat_id`` None: a slot the round does not use)."""

    round: int
    seat_id: int | None
    kind = "workspace.agent"
    runs_in = ACTIVE


@dataclass(frozen=True)
class RoundClock:
    """The round's clock: its slot is ready ``maxSeconds`` after the agents were set to work."""

    round: int
    kind = "workspace.clock"
    runs_in = ACTIVE


@dataclass(frozen=True)
class RoundClose:
    """An ended round's close: adaptations, then the narrative; then the next round's step."""

    round: int
    kind = "workspace.narrative"
    runs_in = EVERY_STATUS


@dataclass(frozen=True)
class RoundStep:
    """A round: slot i is the i-th agent seat's work, the last slot the round's clock."""

    round: int
    seat_ids: tuple[int, ...]
    kind = "workspace.round"

    def for_slot(self, slot: int, slots: int):
        if slot == slots - 1:
            return RoundClock(self.round)
        return AgentWork(self.round, self.seat_ids[slot] if slot < len(self.seat_ids) else None)


def plan(room) -> Planned | None:
    """The room's step from its rounds: an ended round without its narrative is closed first (the
    round the scope closed too, when it has observations); otherwise the open round's agents and
    clock; nothing more once the scope closed."""
    if narrative_pending(room, room.round):
        return Planned(step=RoundClose(room.round - 1))
    closing = closing_round(room)
    if closing is not None:  # the round the scope closed, with observations: its narrative
        return Planned(step=RoundClose(closing.number))
    turn = current_turn(room)
    if turn is None or turn.ended_at is not None:
        return None
    return Planned(step=RoundStep(turn.number, tuple(agent_seats(room).values_list("pk", flat=True))))


def run_agent(run: StepRun) -> StepResult:
    step = run.step
    timeout = timeouts()[0]
    work = (rounds.prepare_agent(run.room, step.round, step.seat_id, timeout, run.provider_override)
            if step.seat_id is not None else None)
    if work is None or rounds.committed(run.room.pk, step.round, step.seat_id, work.correlation):
        return StepResult("skipped" if rounds.skip_agent(run.claim) else "lost_lease", step=step.kind)
    over, why, need = rounds.over_budget(run.claim, work.context.agent_id, work.request, _model(work))
    if over == "lost":
        return StepResult("lost_lease", step=step.kind)
    if over == "room":  # no call: the workspace pauses itself; the seat works in this round once resumed
        return StepResult("paused" if rounds.sit_out_for_budget(work, why, need, run.claim) else "lost_lease", step=step.kind)
    if over:  # no call: the agent's own budget is used up, the seat's round says so
        ok = rounds.commit_agent(work, rounds.Called(None, "over_budget", why), run.claim)
        return StepResult("committed" if ok else "lost_lease", step=step.kind)
    called = rounds.call_provider(work.provider, work.request, timeout, run.abandoned)
    retry = _again_later(run, called, "agent.round_work", work.correlation, work.context.agent_id,
                         getattr(work.provider, "name", ""), {"round": step.round, "seatId": step.seat_id})
    if retry is not None:
        return retry
    ok = rounds.commit_agent(work, called, run.claim)
    return StepResult("committed" if ok else "lost_lease", step=step.kind)


def _again_later(run: StepRun, called: rounds.Called, component: str, correlation: str, agent_id: int | None,
                 provider: str, input: dict) -> StepResult | None:
    """A transient model error: the discussion's retry rule (``calls.again_later``), the failed call
    keeping its invocation, marked discarded (it is not the slot's work, so ``rounds.committed`` does not
    count it), in the round's correlation. None otherwise, or with the attempts used up: the outcome is committed."""
    if not called.transient:
        return None

    def record(_error: str) -> None:
        record_discarded_call(run.claim, CallRecord(component, agent_id=agent_id, provider=provider, input=input),
                              f"{called.error}; the step runs again", correlation=correlation)

    return again_later(run, called.error, record)


def run_clock(run: StepRun) -> StepResult:
    return StepResult(end_round_on_timeout(run.claim, run.step.round), step=run.step.kind)


def run_close(run: StepRun) -> StepResult:
    step = run.step
    rounds.learn_adaptations(run.room, step.round)
    timeout = timeouts()[1]
    work = rounds.prepare_close(run.room, step.round, timeout, run.provider_override)
    if work is None:  # written meanwhile: the next round's agents start
        return StepResult("skipped" if rounds.skip_close(run.claim, step.round) else "lost_lease", step=step.kind)
    over, why, _need = rounds.over_budget(run.claim, work.moderator_id, work.request, _model(work))
    if over == "lost":
        return StepResult("lost_lease", step=step.kind)
    if over:  # no call: the narrative is the offline one, labelled as such
        narrative = rounds.commit_narrative(work, rounds.Called(None, "over_budget", why), run.claim)
        return StepResult("committed" if narrative is not None else "lost_lease", step=step.kind)
    called = rounds.call_provider(work.provider, work.request, timeout, run.abandoned)
    retry = _again_later(run, called, "narrative.generate", work.correlation, work.moderator_id,
                         getattr(work.provider, "name", ""), {"round": step.round, "purpose": work.request.purpose})
    if retry is not None:
        return retry
    narrative = rounds.commit_narrative(work, called, run.claim)
    return StepResult("committed" if narrative is not None else "lost_lease", step=step.kind)


def _model(work) -> str:
    """The model a budget prices the call at: the request's, else the provider's name."""
    return work.request.model or getattr(work.provider, "name", "")


def register() -> None:
    registry.register_planner(ROOM_KIND, plan, claims_in=EVERY_STATUS)
    registry.register_handler(AgentWork.kind, run_agent)
    registry.register_handler(RoundClock.kind, run_clock)
    registry.register_handler(RoundClose.kind, run_close)
