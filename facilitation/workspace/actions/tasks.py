"""Tasks: the manager creates, assigns and deletes them; a seat claims, starts and completes them.

``pending -> claimed -> in_progress -> completed``; any other step is 409 and changes nothing.
Every change adds one to the task's ``version``; an edit that names the version it was made on is refused
when that one is stale, with the task as it is now (as a narrative's edit is). An edit that names none (a
client of the route from before tasks had versions) is applied to the task as it is.
"""
from django.db import transaction
from django.utils import timezone

from facilitation.workspace import inputs
from facilitation.workspace.audit import log_invocation
from facilitation.workspace.payloads import task_payload
from facilitation.workspace.rules import correlation_of, locked, require_open
from rooms.errors import StateConflict, ValidationFailed
from rooms.events import EventType, record_event
from rooms.models import Room, Seat, TaskAssignment

EVENT = EventType.TASK
T = TaskAssignment.Status
# verb -> (from, to, timestamp field)
STEPS = {
    "claim": (T.PENDING, T.CLAIMED, "claimed_at"),
    "start": (T.CLAIMED, T.IN_PROGRESS, "started_at"),
    "complete": (T.IN_PROGRESS, T.COMPLETED, "completed_at"),
}


def _seat(room: Room, seat_id, key: str, errors: inputs.Errors) -> Seat | None:
    seat_id = inputs.optional_id(seat_id, key, errors)
    if seat_id is None:
        return None
    seat = Seat.objects.filter(pk=seat_id, room=room).exclude(role=Seat.Role.FACILITATOR).select_related("agent", "user").first()
    if seat is None:
        errors.add(key, "No seat with that id in this room.")
    return seat


def _task(room: Room, task_id: int) -> TaskAssignment:
    task = TaskAssignment.objects.select_for_update().filter(pk=task_id, room=room).first()
    if task is None:
        from rooms.errors import NotFound

        raise NotFound("No such task in this room.")
    return task


def _changed(room: Room, task: TaskAssignment, component: str, *, user=None, agent_id=None, before: dict | None = None,
             correlation: str | None = None) -> None:
    record_event(room, EVENT, {"task": task_payload(task)})
    log_invocation(room, component, correlation=correlation or correlation_of(room), user=user, agent_id=agent_id,
                   input={"taskId": task.pk, "before": before} if before is not None else {"taskId": task.pk},
                   output=f"{task.status}: {task.title}"[:500])


def do_create_task(room: Room, user, *, title, description=None, priority=None, assignee_id=None) -> TaskAssignment:
    with transaction.atomic():
        room = locked(room)
        require_open(room)
        errors = inputs.Errors()
        clean_title = inputs.text(title, "title", errors, limit=inputs.TITLE)
        clean_description = inputs.text(description, "description", errors, limit=inputs.COMMENT, required=False) or ""
        clean_priority = inputs.priority(priority, errors, required=False)
        assignee = _seat(room, assignee_id, "assigneeId", errors)
        errors.raise_if_any("The task is not valid.")
        task = TaskAssignment.objects.create(
            room=room, title=clean_title, description=clean_description, priority=clean_priority or 3,
            assignee=assignee, round=room.round, created_by=user,
        )
        _changed(room, task, "manager.create_task", user=user)
    return task


EDITABLE = ("title", "description", "priority", "assignee_id")


def do_update_task(room: Room, task_id: int, user, **fields) -> TaskAssignment:
    with transaction.atomic():
        room = locked(room)
        require_open(room)
        task = _task(room, task_id)
        errors = inputs.Errors()
        unknown = sorted(k for k in fields if k not in (*EDITABLE, "version"))
        for key in unknown:
            errors.add(key, "Unknown or read-only field (status changes through claim, start and complete).")
        version = inputs.version(fields["version"], errors) if fields.get("version") is not None else None
        changes = {}
        if "title" in fields:
            changes["title"] = inputs.text(fields["title"], "title", errors, limit=inputs.TITLE)
        if "description" in fields:
            changes["description"] = inputs.text(fields["description"] or "", "description", errors, limit=inputs.COMMENT,
                                                 required=False) or ""
        if "priority" in fields:
            changes["priority"] = inputs.priority(fields["priority"], errors, required=True)
        if "assignee_id" in fields:
            changes["assignee"] = _seat(room, fields["assignee_id"], "assigneeId", errors)
        errors.raise_if_any("The task update is not valid.")
        if not changes:
            raise ValidationFailed("Nothing to change.", {"body": ["Send title, description, priority or assigneeId."]})
        if task.status == T.COMPLETED:
            raise StateConflict("A completed task cannot be changed.", {"status": task.status}, code="task_completed")
        if version is not None and version != task.version:
            raise StateConflict("The task changed meanwhile: compare your changes with the current task and save again.",
                                {"yourVersion": version, "current": task_payload(task)}, code="stale_version")
        if "assignee" in changes and task.status != T.PENDING and changes["assignee"] != task.claimed_by:
            raise StateConflict("The task was already claimed; it stays with the seat that claimed it.",
                                {"status": task.status, "claimedById": task.claimed_by_id}, code="task_claimed")
        before = task_payload(task)
        for name, value in changes.items():
            setattr(task, name, value)
        task.version += 1
        task.save()
        _changed(room, task, "manager.edit_task", user=user, before=before)
    return task


def do_delete_task(room: Room, task_id: int, user) -> dict:
    """The manager removes a task that is not done (made by mistake, or no longer wanted): the board, the agents'
    context and the report lose it; the invocation keeps what it was. A completed task stays, as the work it records."""
    with transaction.atomic():
        room = locked(room)
        require_open(room)
        task = _task(room, task_id)
        if task.status == T.COMPLETED:
            raise StateConflict("A completed task cannot be deleted: it records work done.", {"status": task.status},
                                code="task_completed")
        before = task_payload(task)
        task.delete()
        record_event(room, EVENT, {"task": before, "deleted": True})
        log_invocation(room, "manager.delete_task", correlation=correlation_of(room), user=user,
                       input={"taskId": task_id, "before": before}, output=f"deleted: {before['title']}"[:500])
    return before


def advance_task(room: Room, task: TaskAssignment, verb: str, seat: Seat | None, *, user=None, agent_id=None,
                 correlation: str | None = None) -> TaskAssignment:
    """One step of a task's life. The caller holds the room's lock and the task's row lock."""
    source, target, stamp = STEPS[verb]
    if task.status != source:
        raise StateConflict(f"Cannot {verb} a task that is {task.status.replace('_', ' ')}.",
                            {"status": task.status, "allowedFrom": source}, code="invalid_transition")
    if verb == "claim":
        if seat is None:
            raise ValidationFailed("Say which seat claims the task.", {"seatId": ["Required: the task has no assignee."]})
        if task.assignee_id and task.assignee_id != seat.pk:
            raise StateConflict("The task is assigned to another seat.", {"assigneeId": task.assignee_id}, code="task_assigned")
        task.claimed_by = seat
        task.assignee = task.assignee or seat
    elif seat is not None and task.claimed_by_id != seat.pk:
        raise StateConflict("Only the seat that claimed the task moves it on.", {"claimedById": task.claimed_by_id},
                            code="task_claimed")
    task.status = target
    setattr(task, stamp, timezone.now())
    task.version += 1
    task.save()
    who = "agent" if agent_id else "manager"
    _changed(room, task, f"{who}.{verb}_task", user=user, agent_id=agent_id, correlation=correlation)
    return task


def do_task_step(room: Room, task_id: int, verb: str, user, *, seat_id=None) -> TaskAssignment:
    """A person (the manager) moves a task on, for the seat that holds it (or ``seatId`` when claiming)."""
    with transaction.atomic():
        room = locked(room)
        require_open(room)
        task = _task(room, task_id)
        errors = inputs.Errors()
        seat = _seat(room, seat_id, "seatId", errors)
        errors.raise_if_any("The request is not valid.")
        if verb == "claim" and seat is None and task.assignee_id:
            seat = task.assignee
        return advance_task(room, task, verb, seat, user=user)
