"""Workspace tasks: GET/POST .../tasks, PATCH .../tasks/{tid}, POST .../tasks/{tid}/claim|start|complete.

Everyone who may view the room sees every task. The manager (owner or staff) creates, edits,
moves and deletes tasks (DELETE .../tasks/{tid}, not a completed one); viewers and participants get 403 on changes.
"""
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.views import APIView

from facilitation.api import schemas
from facilitation.api import workspace_schemas as ws
from facilitation.api.envelope import ok
from facilitation.api.parsing import choice_params, json_body
from facilitation.api.permissions import controllable_room, viewable_room
from facilitation.api.views.workspace import TAG, row_id
from facilitation.workspace.actions.tasks import STEPS, do_create_task, do_delete_task, do_task_step, do_update_task
from facilitation.workspace.payloads import task_payload
from facilitation.workspace.rules import require_workspace
from rooms.errors import ValidationFailed
from rooms.models import TaskAssignment


class TasksView(APIView):
    @extend_schema(tags=TAG, operation_id="workspace_tasks_list", summary="Every task of the room",
                   parameters=[OpenApiParameter("status", str, description="One status or several separated by commas.")],
                   responses=schemas.responses({200: ws.TaskListEnvelope}, 400, 409))
    def get(self, request, id: int):
        room = viewable_room(request.user, id)
        require_workspace(room)
        rows = TaskAssignment.objects.filter(room=room).select_related("created_by")
        statuses = choice_params(request, "status", TaskAssignment.Status.values)
        if statuses:
            rows = rows.filter(status__in=statuses)
        data = [task_payload(t) for t in rows.order_by("-priority", "id")]
        return ok(data, meta={"count": len(data)})

    @extend_schema(tags=TAG, operation_id="workspace_tasks_create", summary="Create a task (the manager)",
                   request=ws.TaskIn, responses=schemas.responses({201: ws.TaskEnvelope}, 400, 403, 409, 415))
    def post(self, request, id: int):
        room = controllable_room(request.user, id)
        body = json_body(request)
        unknown = sorted(k for k in body if k not in ("title", "description", "priority", "assignee_id"))
        if unknown:
            raise ValidationFailed("Unknown fields.", {k: ["Unknown or read-only field."] for k in unknown})
        task = do_create_task(room, request.user, title=body.get("title"), description=body.get("description"),
                              priority=body.get("priority"), assignee_id=body.get("assignee_id"))
        return ok(task_payload(task), status=201)


class TaskView(APIView):
    @extend_schema(tags=TAG, operation_id="workspace_tasks_update", summary="Edit title, description, priority, assignee",
                   description="Send the `version` you edited (every change to the task, a claim, start or complete "
                               "too, adds one to it) to be told when somebody changed it meanwhile: a stale version is "
                               "409 `stale_version` with the current task in `error.details.current`. Without "
                               "`version` the edit applies to the task as it is.",
                   request=ws.TaskPatchIn, responses=schemas.responses({200: ws.TaskEnvelope}, 400, 403, 409, 415))
    def patch(self, request, id: int, tid: int):
        room = controllable_room(request.user, id)
        body = json_body(request)
        task = do_update_task(room, row_id(tid), request.user, **body)
        return ok(task_payload(task))

    @extend_schema(tags=TAG, operation_id="workspace_tasks_delete", summary="Delete a task that is not completed (the manager)",
                   responses=schemas.responses({200: ws.TaskEnvelope}, 403, 404, 409))
    def delete(self, request, id: int, tid: int):
        room = controllable_room(request.user, id)
        return ok(do_delete_task(room, row_id(tid), request.user))


def task_step_view(verb: str):
    def post(self, request, id: int, tid: int):
        room = controllable_room(request.user, id)
        body = json_body(request) if request.body else {}
        task = do_task_step(room, row_id(tid), verb, request.user, seat_id=body.get("seat_id"))
        return ok(task_payload(task))

    source, target, _ = STEPS[verb]
    post = extend_schema(
        tags=TAG, operation_id=f"workspace_tasks_{verb}", summary=f"{verb.capitalize()} a task ({source} -> {target})",
        description="Any other step is 409 and changes nothing.", request=ws.TaskStepIn,
        responses=schemas.responses({200: ws.TaskEnvelope}, 400, 403, 409, 415),
    )(post)
    return type(f"Task{verb.capitalize()}View", (APIView,), {"post": post})
