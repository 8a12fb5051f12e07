"""A workspace's life: start (round 1), pause, resume, and the manager closing the scope.

Completing or archiving makes the room read-only everywhere: every later write is 409 and the
work in flight finds the room closed when it tries to commit.
"""
import math

from django.db import transaction
from django.utils import timezone

from facilitation.workspace.actions.rounds import calls_to_make, end_round, resume_work, start_round
from facilitation import budget
from facilitation.workspace.actions.status import BUDGET, budget_need, pause_itself, status_changed
from facilitation.workspace.rules import correlation_of, current_turn, locked, require_open, require_status, require_workspace
from rooms.errors import StateConflict
from rooms.models import Room, Turn

S = Room.Status


def do_start_workspace(room: Room, user=None) -> Room:
    with transaction.atomic():
        room = locked(room)
        require_status(room, (S.DRAFT,), "start")
        room.status = S.ACTIVE
        room.started_at = timezone.now()
        status_changed(room, user, "manager.start_room", S.DRAFT, correlation_of(room))
        start_round(room, 1, user=user, schedule_agents=True)
    return room


def do_pause_workspace(room: Room, user=None) -> Room:
    """Agents already at work may still publish; no new round work is handed out until resume."""
    with transaction.atomic():
        room = locked(room)
        require_status(room, (S.ACTIVE,), "pause")
        room.status, room.pause_reason = S.PAUSED, ""
        status_changed(room, user, "manager.pause_room", S.ACTIVE, correlation_of(room))
    return room


#: The need a workspace paused with when its budget was lowered to what is spent, before any call was refused: each
#: call needs the budget above what is spent (what a call may use is known once its prompt is built).
ABOVE_SPENT = (1, 0.0)


def do_pause_if_spent(room: Room) -> Room:
    """An active workspace whose budget is used up (a manager set it at or below what is spent) pauses itself for its
    budget at once, as it would at its agents' next call: the status says so now, and the resume waits for a budget
    above what is spent. Anything else: nothing changes."""
    with transaction.atomic():
        room = locked(room)
        if room.status == S.ACTIVE and budget.over(room, ABOVE_SPENT):
            pause_itself(room, BUDGET, correlation_of(room), need=ABOVE_SPENT, detail={"cause": "budget lowered"})
    return room


def do_resume_workspace(room: Room, user=None) -> Room:
    """Resume a paused workspace. One that paused itself for its budget resumes only once the budget
    covers the calls its round still has to make, each as much as the call it refused (409
    ``budget_exceeded`` otherwise, naming the budget needed: nothing would run, or the first call would
    run and the workspace pause again at once). The refused call stands for every call: another seat's need is
    known only once its prompt is built (which searches the room, not done under this lock), and what a seat's
    earlier calls used is less than the most its call's check keeps (``budget.estimate``)."""
    with transaction.atomic():
        room = locked(room)
        require_status(room, (S.PAUSED,), "resume")
        need = budget_need(room) if room.pause_reason == BUDGET else None
        if need is not None:
            calls = calls_to_make(room)
            if budget.over(room, (need[0] * calls, need[1] * calls)):
                raise _budget_too_small(room, need, calls)
        room.status, room.pause_reason = S.ACTIVE, ""
        status_changed(room, user, "manager.resume_room", S.PAUSED, correlation_of(room))
        # Slots refused while paused run now; finished seats' slots are done.
        resume_work(room)
    return room


def _budget_too_small(room: Room, need: tuple[int, float], calls: int) -> StateConflict:
    """The resume's refusal: the budget the round needs (what is spent and its calls still to make), in words."""
    tokens = room.tokens_used + need[0] * calls
    usd = math.ceil((float(room.cost_usd) + need[1] * calls) * 100) / 100
    short = [f"{tokens:,} tokens" if room.budget_tokens is not None and tokens > room.budget_tokens else "",
             f"${usd:.2f}" if room.budget_usd is not None and usd > float(room.budget_usd) else ""]
    agents = "1 agent still works" if calls == 1 else f"{calls} agents still work"
    each = ("each call needs the budget above what is spent" if tuple(need) == ABOVE_SPENT
            else budget.need_text(need))  # the budget was lowered: no call was refused, so none said what it needs
    return StateConflict(
        f"Raise the budget to at least {' and '.join(x for x in short if x)} first: {agents} in this round, and "
        f"{each} (spent {room.tokens_used:,} tokens, ${float(room.cost_usd):.2f}).",
        {"budgetTokens": room.budget_tokens, "budgetUsd": float(room.budget_usd) if room.budget_usd is not None else None,
         "needTokens": need[0], "needUsd": need[1], "calls": calls, "neededTokens": tokens, "neededUsd": usd},
        code="budget_exceeded")


def _close(room: Room, user, target: str, component: str) -> Room:
    with transaction.atomic():
        room = locked(room)
        require_workspace(room)
        before = room.status
        # Archiving a completed scope is allowed; anything else on a closed room is not.
        closed = before == S.ARCHIVED or (before == S.COMPLETED and target != S.ARCHIVED)
        if closed or (before in Room.TERMINAL and before != S.COMPLETED):
            raise StateConflict(f"This workspace is {before}: it cannot become {target}.", {"status": before},
                                code="room_closed" if closed else "invalid_transition")
        if before == S.DRAFT and target == S.COMPLETED:
            raise StateConflict("This workspace never ran, so there is no scope to complete: start it, or archive it.",
                                {"status": before}, code="invalid_transition")
        turn = current_turn(room)
        correlation = correlation_of(room)
        if turn is not None and turn.ended_at is None:
            end_round(room, turn, ended_by=Turn.EndedBy.SCOPE, user=user)
        room.status = target
        room.ended_at = room.ended_at or timezone.now()
        status_changed(room, user, component, before, correlation)
    return room


def do_complete_workspace(room: Room, user) -> Room:
    return _close(room, user, S.COMPLETED, "manager.complete_room")


def do_archive_workspace(room: Room, user) -> Room:
    return _close(room, user, S.ARCHIVED, "manager.archive_room")


def do_control_workspace(room: Room, verb: str, user=None) -> Room:
    """The discussion controls as a workspace understands them (REST lifecycle routes and socket controls)."""
    controls = {"start": do_start_workspace, "pause": do_pause_workspace, "resume": do_resume_workspace}
    if verb not in controls:
        require_open(room)
        raise StateConflict(f"A workspace does not {verb}: the manager completes or archives it.",
                            {"status": room.status}, code="invalid_transition")
    return controls[verb](room, user)
