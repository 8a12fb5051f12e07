"""The manager's controls of a workspace: persona/role swap, adaptations, the invocation log,
search, complete and archive."""
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.views import APIView

from facilitation.api import schemas
from facilitation.api import workspace_schemas as ws
from facilitation.api.envelope import ok
from facilitation.api.pagination import paginate
from facilitation.api.parsing import int_param, json_body, no_fields, safe_text
from facilitation.api.permissions import controllable_room, viewable_room
from facilitation.api.views.discussions import DiscussionEnvelope, detail_response
from facilitation.api.views.workspace import MAX_ID, TAG, row_id
from facilitation.workspace.actions.adaptation import do_tune_adaptation
from facilitation.workspace.actions.lifecycle import do_archive_workspace, do_complete_workspace
from facilitation.workspace.actions.seats import do_swap_seat
from facilitation.workspace.payloads import adaptation_payload, invocation_payload, seat_payload
from facilitation.workspace.rules import require_workspace
from facilitation.workspace.search import MAX_QUERY, search_room
from rooms.errors import ValidationFailed
from rooms.models import Invocation, PersonaAdaptation

# The invocation log pages as it was read before it was paged: 200 rows, ``limit`` (now ``pageSize``) up to 1000.
LOG_PAGE_SIZE, LOG_MAX_PAGE_SIZE = 200, 1000
MAX_FILTER = 100  # the longest correlationId or component the log is filtered by


class ParticipantView(APIView):
    @extend_schema(
        tags=TAG, operation_id="workspace_participants_update", summary="Swap a seat's persona or role mid-room",
        description="Send the seat's `version`; a stale one is 409. Each (agent, persona) pair keeps its own adaptation. "
                    "Logged as invocation `manager.swap_persona` (personaId sent) and `manager.swap_role` (roleId "
                    "sent), with the seat before and after; pushed as one `discussion:participant` event.",
        request=ws.SeatPatchIn, responses=schemas.responses({200: ws.SeatEnvelope}, 400, 403, 409, 415),
    )
    def patch(self, request, id: int, seat_id: int):
        room = controllable_room(request.user, id)
        body = json_body(request)
        seat = do_swap_seat(room, row_id(seat_id), request.user, **body)
        return ok(seat_payload(seat))


class AdaptationsView(APIView):
    @extend_schema(tags=TAG, operation_id="workspace_adaptations_list", summary="Persona adaptations per (agent, persona)",
                   responses=schemas.responses({200: ws.AdaptationListEnvelope}, 409))
    def get(self, request, id: int):
        room = viewable_room(request.user, id)
        require_workspace(room)
        data = [adaptation_payload(a) for a in PersonaAdaptation.objects.filter(room=room).order_by("id")]
        return ok(data, meta={"count": len(data)})


class AdaptationView(APIView):
    @extend_schema(tags=TAG, operation_id="workspace_adaptations_update", summary="Tune learned thresholds (the manager)",
                   description="A stale `version` is 409 with the current row.",
                   request=ws.AdaptationPatchIn, responses=schemas.responses({200: ws.AdaptationEnvelope}, 400, 403, 409, 415))
    def patch(self, request, id: int, aid: int):
        room = controllable_room(request.user, id)
        body = json_body(request)
        row = do_tune_adaptation(room, row_id(aid), request.user, **body)
        return ok(adaptation_payload(row))


class InvocationsView(APIView):
    @extend_schema(
        tags=TAG, operation_id="workspace_invocations_list", summary="The room's invocation log (owner and staff)",
        parameters=[OpenApiParameter("correlationId", {"type": "string", "maxLength": MAX_FILTER},
                                     description="Only this chain."),
                    OpenApiParameter("component", {"type": "string", "maxLength": MAX_FILTER},
                                     description="Only this component, e.g. manager.edit_narrative or manager.swap_role."),
                    schemas.int_query("afterId", "Only invocations with a larger id.", 0, MAX_ID),
                    *schemas.page_params(LOG_PAGE_SIZE, LOG_MAX_PAGE_SIZE, alias="limit")],
        description=f"Oldest first, {LOG_PAGE_SIZE} to a page unless `pageSize` says otherwise. Read on with "
                    "`page` + 1 while `meta.hasNext`, or with `afterId` = the last id (then `meta` counts only "
                    "the later ones).",
        responses=schemas.responses({200: ws.InvocationListEnvelope}, 400, 403),
    )
    def get(self, request, id: int):
        room = controllable_room(request.user, id)
        rows = Invocation.objects.filter(room=room).select_related("user")
        for param, field in (("correlationId", "correlation_id"), ("component", "component")):
            value = request.query_params.get(param)
            if value:
                if len(value) > MAX_FILTER:
                    raise ValidationFailed(f"{param} is too long.", {param: [f"At most {MAX_FILTER} characters."]})
                rows = rows.filter(**{field: safe_text(value, param)})
        rows = rows.filter(pk__gt=int_param(request, "afterId", 0, 0, MAX_ID))
        page, meta = paginate(request, rows.order_by("id"), default_size=LOG_PAGE_SIZE, max_size=LOG_MAX_PAGE_SIZE,
                              size_alias="limit")
        data = [invocation_payload(i) for i in page]
        return ok(data, meta={"count": len(data), **meta})


class SearchView(APIView):
    @extend_schema(
        tags=TAG, operation_id="workspace_search", summary="Ranked search over observations, tasks and narratives",
        parameters=[OpenApiParameter("q", {"type": "string", "minLength": 1, "maxLength": MAX_QUERY, "pattern": r"\S"},
                                     required=True, description=f"Words to find (at most {MAX_QUERY} characters)."),
                    schemas.int_query("limit", "At most this many per kind (default 20).", 1, 100)],
        responses=schemas.responses({200: ws.SearchEnvelope}, 400, 409),
    )
    def get(self, request, id: int):
        room = viewable_room(request.user, id)
        require_workspace(room)
        q = safe_text(request.query_params.get("q") or "", "q")
        if not q.strip():
            raise ValidationFailed("Say what to search for.", {"q": ["Required: some words."]})
        if len(q) > MAX_QUERY:
            raise ValidationFailed("The query is too long.", {"q": [f"At most {MAX_QUERY} characters."]})
        result = search_room(room.pk, q, limit=int_param(request, "limit", 20, 1, 100))
        return ok(result.data, meta={"q": q, "engine": result.engine, "reranked": result.reranked})


def _close_view(verb: str, action, summary: str):
    def post(self, request, id: int):
        room = controllable_room(request.user, id)
        no_fields(request)
        return detail_response(request.user, action(room, request.user))

    post = extend_schema(tags=TAG, operation_id=f"workspace_{verb}", summary=summary, request=None,
                         description="Afterwards every write to the room is 409.",
                         responses=schemas.responses({200: DiscussionEnvelope}, 400, 403, 409, 429))(post)
    # no_fields reads a JSON body (the schema lists its 413)
    return type(f"{verb.capitalize()}View", (APIView,), {"post": post, "optional_body_methods": ("post",)})


CompleteView = _close_view("complete", do_complete_workspace, "The manager completes the scope")
ArchiveView = _close_view("archive", do_archive_workspace, "The manager archives the workspace")
