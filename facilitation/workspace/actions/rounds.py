"""Rounds: start, end (by the manager, by the turn policy, or when the scope closes), and the turn
policy the manager may change. The round the scope closes gets its narrative too, when it has
observations (``closing_round``): its close is the closed room's last step.

A round runs as one step of the room (``facilitation.runs``): one slot per agent seat, all at
once, and a last slot for the round's clock, ready after ``turnPolicy.maxSeconds``. Ending
round N immediately opens round N+1 and makes round N's close the room's step (one slot): a
worker learns the agents' adaptations from it and has the moderator agent write its narrative;
when that narrative is committed the step of round N+1 opens and its agents are set to work,
with the narrative in their context. The steps themselves are in ``facilitation.workspace.steps``.
"""
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from facilitation.runs import leases, scheduling
from facilitation.runs.leases import Claim
from facilitation.workspace.actions.status import pause_if_idle
from facilitation.workspace.audit import log_invocation
from facilitation.workspace.payloads import round_payload
from facilitation.workspace.rules import CLOSED, correlation_of, current_turn, locked, new_correlation, require_open, require_status
from rooms.errors import StateConflict
from rooms.events import EventType, record_event
from rooms.models import Narrative, Observation, Room, Seat, TaskAssignment, Turn
from rooms.payloads import status_payload

EVENT = EventType.ROUND
DEFAULT_POLICY = {"maxEvents": 10, "maxSeconds": 300}
POLICY_LIMITS = {"maxEvents": (1, 1000), "maxSeconds": (5, 86_400)}


def policy_of(room: Room) -> dict:
    return {**DEFAULT_POLICY, **(room.turn_policy or {})}


def agent_seats(room: Room):
    """The seats that work in every round: active agents that speak (not the moderator, not observers)."""
    return (Seat.objects.filter(room=room, agent__isnull=False, is_active=True, role__in=Seat.SPEAKING)
            .select_related("agent").order_by("position", "id"))


def start_round(room: Room, number: int, *, user=None, schedule_agents: bool) -> Turn:
    """Open round ``number``. The caller holds the room's lock."""
    correlation = new_correlation(f"ws{room.pk}-r{number}")
    turn = Turn.objects.create(room=room, number=number, correlation_id=correlation)
    room.round = number
    room.save(update_fields=["round", "updated_at"])
    record_event(room, EVENT, {"round": turn.number, "state": "started", "roundInfo": round_payload(turn)})
    log_invocation(room, "round.start", correlation=correlation, user=user, input={"round": number},
                   output=f"round {number} started")
    if schedule_agents:
        set_agents_to_work(room, turn)
    return turn


def round_step_shape(room: Room, *, clock: bool = True) -> tuple[int, dict[int, datetime]]:
    """A round's step: ``(slots, later)``, one slot per agent seat and a last one for the round's
    clock, ready ``maxSeconds`` from now (``clock=False``: ready at once, for a paused room; its
    resume sets the clock going)."""
    agents = agent_seats(room).count()
    if not clock:
        return agents + 1, {}
    return agents + 1, {agents: timezone.now() + timedelta(seconds=policy_of(room)["maxSeconds"])}


def set_agents_to_work(room: Room, turn: Turn) -> None:
    """Every agent seat works concurrently on this round, each on its own slot of the round's step,
    while the round's clock runs (sent on commit). The caller holds the room's lock."""
    slots, later = round_step_shape(room)
    scheduling.schedule(room.pk, leases.advance(room, slots=slots, later=later))


def resume_work(room: Room) -> None:
    """After a pause: the slots of the room's step refused meanwhile are sent again (finished ones are
    done and stay so); a round clock that ran out while the room was paused restarts with ``maxSeconds``.
    The caller holds the room's lock."""
    step = leases.current(room.pk)
    if step is None:
        return
    turn = current_turn(room)
    if turn is not None and turn.ended_at is None and not narrative_pending(room, turn.number):
        leases.rearm(room.pk, step.slots - 1, timezone.now() + timedelta(seconds=policy_of(room)["maxSeconds"]))
    leases.mark_ready(room.pk)
    step_seq, pending = leases.waiting(room.pk)
    scheduling.schedule_slots(room.pk, step_seq, pending)


def calls_to_make(room: Room) -> int:
    """How many agent calls the open round still has to make: its seats' slots not yet done (the round's
    clock aside), or every agent seat while its step has not opened (the round before still waits for its
    narrative); at least one. The caller holds the room's lock."""
    turn = current_turn(room)
    step = leases.current(room.pk)
    if turn is None or turn.ended_at is not None or step is None or narrative_pending(room, turn.number) or step.slots < 2:
        return max(agent_seats(room).count(), 1)
    _seq, pending = leases.waiting(room.pk)
    return max(sum(1 for slot, _ready in pending if slot < step.slots - 1), 1)


def _agent_states(room: Room, turn: Turn) -> dict:
    """A snapshot of every agent seat when the round ends."""
    counts: dict[int, dict] = {}
    for seat_id, event_type, n in (Observation.objects.filter(room=room, round=turn.number).exclude(event_type="")
                                   .values_list("seat_id", "event_type").annotate(n=Count("id"))):
        counts.setdefault(seat_id, {})[event_type] = n
    tasks: dict[int, dict] = {}
    for seat_id, status, n in (TaskAssignment.objects.filter(room=room, assignee__isnull=False)
                               .values_list("assignee_id", "status").annotate(n=Count("id"))):
        tasks.setdefault(seat_id, {})[status] = n
    states = {}
    for seat in Seat.objects.filter(room=room, agent__isnull=False).exclude(role=Seat.Role.FACILITATOR).select_related("agent"):
        types = counts.get(seat.pk, {})
        states[str(seat.pk)] = {
            "name": seat.agent.name, "personaId": seat.persona_in_use_id, "roleId": seat.role_in_use_id,
            "active": seat.is_active, "observations": sum(types.values()), "types": types, "tasks": tasks.get(seat.pk, {}),
        }
    return states


def end_round(room: Room, turn: Turn, *, ended_by: str, user=None) -> Turn | None:
    """Close ``turn``, hand it to a worker for its narrative, and (unless the scope closed) open the next.

    The caller holds the room's lock. Returns the new round's Turn, if one was opened.
    """
    now = timezone.now()
    turn.ended_at = now
    turn.ended_by = ended_by
    turn.event_count = Observation.objects.filter(room=room, round=turn.number).exclude(event_type="").count()
    turn.agent_states = _agent_states(room, turn)
    turn.save(update_fields=["ended_at", "ended_by", "event_count", "agent_states"])
    record_event(room, EVENT, {"round": turn.number, "state": "ended", "roundInfo": round_payload(turn)})
    log_invocation(room, "manager.end_round" if ended_by == Turn.EndedBy.MANAGER else "round.end",
                   correlation=turn.correlation_id, user=user,
                   input={"round": turn.number, "endedBy": ended_by}, output=f"{turn.event_count} observations")
    if ended_by == Turn.EndedBy.SCOPE:  # the scope closed: the room is read-only from now on
        # Its last round still gets its narrative (when it has observations): its close becomes the
        # room's step now, or after the previous round's close, still being written, opens it.
        if turn.event_count and not narrative_pending(room, turn.number):
            scheduling.schedule(room.pk, leases.advance(room))
        return None
    # The round's close becomes the room's step: agents still at work in it lose their lease.
    scheduling.schedule(room.pk, leases.advance(room))
    following = start_round(room, turn.number + 1, user=user, schedule_agents=False)
    if ended_by == Turn.EndedBy.POLICY:  # nobody ended it: if nobody tends the room either, it pauses
        pause_if_idle(room, following.correlation_id)
    return following


def narrative_pending(room: Room, before_round: int) -> bool:
    """True while an ended round before ``before_round`` still waits for its narrative."""
    if before_round <= 1:
        return False
    return not Narrative.objects.filter(room=room, round=before_round - 1).exists()


def closing_round(room: Room) -> Turn | None:
    """The round the scope closed while it still waits for its narrative (it has observations)."""
    turn = current_turn(room)
    if (room.status not in CLOSED or turn is None or turn.ended_by != Turn.EndedBy.SCOPE or not turn.event_count
            or Narrative.objects.filter(room=room, round=turn.number).exists()):
        return None
    return turn


def end_round_if_due(room: Room, turn: Turn) -> bool:
    """The turn policy: end the round once it gathered ``maxEvents`` observations. Caller holds the lock."""
    if room.status != Room.Status.ACTIVE or turn.ended_at is not None or room.round != turn.number:
        return False
    if turn.event_count < policy_of(room)["maxEvents"] or narrative_pending(room, turn.number):
        return False
    end_round(room, turn, ended_by=Turn.EndedBy.POLICY)
    return True


def do_set_turn_policy(room: Room, user, policy: dict) -> Room:
    """The manager changes when rounds end by themselves (``{maxEvents?, maxSeconds?}``, parsed and in
    range; what is not given stays). It applies to the open round at once: its clock is set to the new
    length from the round's start (a round already longer ends now), and a round that already holds
    the new ``maxEvents`` observations ends now."""
    with transaction.atomic():
        room = locked(room)
        require_open(room)
        before = policy_of(room)
        room.turn_policy = {**(room.turn_policy or {}), **policy}
        room.save(update_fields=["turn_policy", "updated_at"])
        after = policy_of(room)
        record_event(room, EventType.STATUS, status_payload(room))
        log_invocation(room, "manager.set_turn_policy", correlation=correlation_of(room), user=user,
                       input={"before": before, "after": after}, output=f"{after['maxEvents']} observations or {after['maxSeconds']} s")
        turn = current_turn(room)
        if room.status != Room.Status.ACTIVE or turn is None or turn.ended_at is not None or narrative_pending(room, turn.number):
            return room  # no round clock runs now: the next one is set from the new policy
        if end_round_if_due(room, turn):
            return room
        step = leases.current(room.pk)
        due = max(timezone.now(), turn.started_at + timedelta(seconds=after["maxSeconds"]))
        if step is not None and leases.retime(room.pk, step.slots - 1, due):
            scheduling.schedule_slots(room.pk, step.step_seq, [(step.slots - 1, due)])
    return room


def do_end_round(room: Room, user) -> Turn:
    """The manager ends the current round. Returns the round that ended."""
    with transaction.atomic():
        room = locked(room)
        require_status(room, (Room.Status.ACTIVE, Room.Status.PAUSED), "end a round")
        turn = current_turn(room)
        if turn is None or turn.ended_at is not None:
            raise StateConflict("No round is open.", code="no_open_round")
        if narrative_pending(room, turn.number):
            raise StateConflict(f"Round {turn.number - 1}'s narrative is still being written; end this round once it is there.",
                                code="narrative_pending")
        end_round(room, turn, ended_by=Turn.EndedBy.MANAGER, user=user)
    return turn


def end_round_on_timeout(claim: Claim, number: int) -> str:
    """The turn policy's clock (the last slot of round ``number``'s step): end the round once
    ``maxSeconds`` passed. ``committed`` (ended), ``postponed`` (not yet: the slot waits for its
    time), ``paused`` (given back; the resume restarts the clock) or ``lost_lease``."""
    with transaction.atomic():
        room = Room.objects.select_for_update().filter(pk=claim.room_id).first()
        if room is None or not leases.still_ours(claim):
            return "lost_lease"
        if room.status != Room.Status.ACTIVE:
            leases.give_back(claim)
            return "paused"
        turn = current_turn(room)
        if room.round != number or turn is None or turn.ended_at is not None or narrative_pending(room, number):
            return "lost_lease"  # not this step's round any more (its close would have replaced the step)
        due = turn.started_at + timedelta(seconds=policy_of(room)["maxSeconds"])
        if (due - timezone.now()).total_seconds() > 0.5:
            leases.postpone(claim, due)
            scheduling.schedule_slots(room.pk, claim.step_seq, [(claim.slot, due)])
            return "postponed"
        end_round(room, turn, ended_by=Turn.EndedBy.POLICY)
    return "committed"
