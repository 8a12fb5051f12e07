"""GET/POST /api/discussions, GET/PATCH/DELETE /api/discussions/{id}, PATCH .../moderator."""
from django.db import transaction
from django.db.models import Count, Q
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.views import APIView

from facilitation.actions.phases import deliberation_of
from facilitation.api import inputs, schemas
from facilitation.api.envelope import ok
from facilitation.api.pagination import paginate
from facilitation.api.parsing import choice_params, json_body, no_fields, safe_text
from facilitation.api.permissions import access_of, controllable_room, viewable_room
from facilitation.api.throttles import CREATE_SCOPE, WriteThrottleMixin
from facilitation.controls import control_room, verb_for
from facilitation.goals.creation import do_create_run
from facilitation.workspace.actions import lifecycle as ws_lifecycle
from facilitation.workspace.actions import rounds as ws_rounds
from facilitation.workspace import rules as ws_rules
from rooms.access import visible_rooms
from rooms.audit import correlation
from rooms.actions.rooms import (
    do_change_moderator, do_copy_room, do_create_room, do_delete_room, do_update_room, require_turn_policy_kind,
)
from rooms.errors import StateConflict
from rooms.models import FacilitationRun, Room, RoomMember

S = Room.Status
TAG = ["discussions"]
DiscussionEnvelope = schemas.envelope("DiscussionEnvelope", schemas.DiscussionOut())
FILTERS = [
    OpenApiParameter("status", str, description="Filter: one status or several separated by commas "
                     f"({', '.join(S.values)})."),
    OpenApiParameter("format", str, enum=Room.Format.values, description="Filter by format."),
    OpenApiParameter("kind", str, enum=Room.Kind.values, description="Filter by kind."),
    OpenApiParameter("q", str, description="Search: words that must all appear in the name or the topic."),
]



def workspace_status(room: Room, target: str, user) -> Room:
    """PATCH {"status"} on a workspace runs the workspace action that reaches it."""
    if target == S.COMPLETED:
        return ws_lifecycle.do_complete_workspace(room, user)
    if target == S.ARCHIVED:
        return ws_lifecycle.do_archive_workspace(room, user)
    verb = {S.ACTIVE: "resume" if room.status == S.PAUSED else "start", S.PAUSED: "pause"}.get(target, target)
    return ws_lifecycle.do_control_workspace(room, verb, user)


def detail_response(user, room: Room, status: int = 200):
    room = Room.objects.select_related("owner", "moderator__created_by").get(pk=room.pk)
    member = RoomMember.objects.filter(room=room, user=user).values_list("access", flat=True).first()
    return ok(schemas.DiscussionOut.render(room, access=access_of(user, room, member)), status=status)


class DiscussionListView(WriteThrottleMixin, APIView):
    """Discussions you may see (yours, shared with you, or all for staff); create one as a draft."""

    throttle_scope = CREATE_SCOPE

    @extend_schema(
        tags=TAG, operation_id="discussions_list", summary="List the discussions you may see",
        parameters=[*FILTERS, *schemas.PAGE_PARAMS],
        responses=schemas.responses({200: schemas.envelope(
            "DiscussionListEnvelope", schemas.DiscussionSummaryOut(many=True), schemas.DiscussionListMetaOut())}, 400),
    )
    def get(self, request):
        user = request.user
        statuses = choice_params(request, "status", S.values)
        formats = choice_params(request, "format", Room.Format.values)
        kinds = choice_params(request, "kind", Room.Kind.values)
        # Ephemeral facilitation runs live outside the main list (staff: GET /api/ephemeral-runs).
        base = Room.objects.filter(pk__in=visible_rooms(user).values("pk")).exclude(
            Q(kind=Room.Kind.FACILITATION) & ~Q(run__origin=FacilitationRun.Origin.PERSISTENT))
        if formats:
            base = base.filter(format__in=formats)
        if kinds:
            base = base.filter(kind__in=kinds)
        for word in safe_text(request.query_params.get("q", "")[:200], "q").split()[:10]:
            base = base.filter(Q(name__icontains=word) | Q(topic__icontains=word))
        counts = {s: 0 for s in S.values}
        counts.update({row["status"]: row["n"] for row in base.order_by().values("status").annotate(n=Count("id"))})
        rows_qs = base.filter(status__in=statuses) if statuses else base
        rows, meta = paginate(request, rows_qs.select_related("owner", "moderator__created_by").order_by("-created_at", "-id"))
        members = dict(RoomMember.objects.filter(user=user, room_id__in=[r.pk for r in rows]).values_list("room_id", "access"))
        data = [schemas.DiscussionSummaryOut.render(r, access=access_of(user, r, members.get(r.pk))) for r in rows]
        return ok(data, meta={**meta, "counts": counts})

    @extend_schema(
        tags=TAG, operation_id="discussions_create", summary="Create a draft discussion",
        request=inputs.DiscussionCreateRequest,
        description="The body is one of two: a discussion or workspace (`DiscussionCreateIn`; `kind` absent, "
                    "`discussion` or `workspace`), or with `kind: \"facilitation\"` a facilitation run "
                    "(`FacilitationRunCreateIn`: `{name, topic (the goal), kind, pattern, slots, reportTo, deadline, "
                    "reminderMinutes?, ttlHours?, mode?}`); a run needs the permission to start runs (403) and is "
                    "refused over the quota or the live-run cap (409). The answer carries `joinCode`.",
        responses=schemas.responses({201: DiscussionEnvelope}, 400, 403, 409, 415, 429),
    )
    def post(self, request):
        body = json_body(request)
        if body.get("kind") == Room.Kind.FACILITATION:
            return detail_response(request.user, do_create_run(request.user, body), status=201)
        room = do_create_room(request.user, **inputs.DiscussionCreateIn.parse(body))
        return detail_response(request.user, room, status=201)


class DiscussionDetailView(APIView):
    """One discussion. Reading needs view access; changing or deleting needs its owner or staff."""

    @extend_schema(tags=TAG, operation_id="discussions_retrieve", summary="One discussion",
                   responses=schemas.responses({200: DiscussionEnvelope}))
    def get(self, request, id: int):
        return detail_response(request.user, viewable_room(request.user, id))

    @extend_schema(
        tags=TAG, operation_id="discussions_update",
        summary="Update name, topic, format, status, conclusion, maxRounds (a workspace's turnPolicy too)",
        description="Only the fields sent change. `status` runs the matching lifecycle action (see the field); "
                    "the whole update is applied or nothing is.",
        request=inputs.DiscussionPatchIn,
        responses=schemas.responses({200: DiscussionEnvelope}, 400, 403, 409, 415),
    )
    def patch(self, request, id: int):
        room = controllable_room(request.user, id)
        fields, target, policy = inputs.DiscussionPatchIn.parse(json_body(request))
        if policy is not None:
            require_turn_policy_kind(room.kind)
        # One request, one correlation id on its audit rows: a workspace's is its round's chain, which the
        # workspace's own rows of this request (a pause, a budget pause, a turn policy) join too.
        chain = ws_rules.correlation_of(room) if room.kind == Room.Kind.WORKSPACE else None
        with transaction.atomic(), correlation(chain):
            if fields:
                room = do_update_room(room, actor=request.user, **fields)
                if room.kind == Room.Kind.WORKSPACE and target is None:
                    room = ws_lifecycle.do_pause_if_spent(room)
            if policy:
                room = ws_rounds.do_set_turn_policy(room, request.user, policy)
            if target is not None and target != room.status and room.kind == Room.Kind.WORKSPACE:
                room = workspace_status(room, target, request.user)
            elif target is not None and target != room.status:
                verb = verb_for(room, target)
                if verb is None:
                    raise StateConflict(f"Cannot change a {room.status} discussion to {target}.",
                                        {"status": room.status}, code="invalid_transition")
                room = control_room(room, verb, request.user)
        return detail_response(request.user, room)

    @extend_schema(tags=TAG, operation_id="discussions_destroy", summary="Delete a discussion",
                   responses=schemas.responses({200: schemas.envelope("DeletedEnvelope", schemas.DeletedOut())}, 403))
    def delete(self, request, id: int):
        room = controllable_room(request.user, id)
        do_delete_room(room, actor=request.user)
        return ok({"id": id, "deleted": True})


class ModeratorView(APIView):
    """The facilitator of a discussion, changeable while it is a draft."""

    @extend_schema(tags=TAG, operation_id="discussions_moderator_update", summary="Change the facilitator (draft only)",
                   request=inputs.ModeratorIn,
                   responses=schemas.responses({200: DiscussionEnvelope}, 400, 403, 409, 415))
    def patch(self, request, id: int):
        room = controllable_room(request.user, id)
        body = json_body(request)
        room = do_change_moderator(room, request.user, inputs.ModeratorIn.parse(body))
        return detail_response(request.user, room)


class CopyView(WriteThrottleMixin, APIView):
    """A new draft from a discussion (its owner or staff): same topic, format, facilitator and seats."""

    throttle_scope = CREATE_SCOPE
    optional_body_methods = ("post",)  # no_fields reads a JSON body (the schema lists its 413)

    @extend_schema(tags=TAG, operation_id="discussions_copy", summary="Copy as a new draft", request=None,
                   description="The copy keeps the topic, format, facilitator, seats, limits, template (from its first "
                               "phase), consensus rules, `maxParallel` and a workspace's `turnPolicy`. Nothing that was "
                               "said is copied; the copy is yours. Logged as invocation `room.copy`. A facilitation run "
                               "is not copied (400 on `kind`).",
                   responses=schemas.responses({201: DiscussionEnvelope}, 400, 403, 429))
    def post(self, request, id: int):
        room = controllable_room(request.user, id)
        no_fields(request)
        return detail_response(request.user, do_copy_room(room, request.user, deliberation_of(room)), status=201)
