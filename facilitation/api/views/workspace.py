"""Workspace rooms: observations, rounds and narratives (``/api/discussions/{id}/...``).

Reading needs view access (404 otherwise). People with participant access publish
observations; the manager (owner or staff) ends rounds and edits narratives; viewers get 403.
"""
from django.db.models import Exists, OuterRef
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.views import APIView

from facilitation.api import schemas
from facilitation.api import workspace_schemas as ws
from facilitation.api.envelope import ok
from facilitation.api.parsing import bool_param, choice_params, int_param, json_body
from facilitation.api.permissions import controllable_room, participating_room, viewable_room
from facilitation.workspace.actions.narratives import do_edit_narrative
from facilitation.workspace.actions.observations import do_post_observation
from facilitation.workspace.actions.rounds import do_end_round
from facilitation.workspace.payloads import narrative_payload, observation_payload, round_payload
from facilitation.workspace.rules import require_workspace
from rooms.access import can_control
from rooms.errors import NotFound
from rooms.models import Narrative, Observation, Turn

TAG = ["workspace"]
MAX_ID = 2**62


def row_id(value: int) -> int:
    """An id from the path; beyond what a database stores it names nothing."""
    if value > 2**63 - 1:
        raise NotFound("Not found.")
    return value


class ObservationsView(APIView):
    @extend_schema(
        tags=TAG, operation_id="workspace_observations_list", summary="Typed observations, ordered by seq",
        parameters=[
            OpenApiParameter("type", str, description="One type or several separated by commas."),
            schemas.int_query("round", "Only this round.", 0, 1_000_000),
            schemas.int_query("seatId", "Only this seat's observations.", 1, MAX_ID),
            OpenApiParameter("unanswered", bool, description="true: only observations nobody answered yet."),
            schemas.int_query("afterSeq", "Only observations with a larger seq.", 0, MAX_ID),
            schemas.int_query("beforeSeq", "Only observations with a smaller seq.", 1, MAX_ID),
            OpenApiParameter("latest", bool, description="true: the newest `limit` matching observations (still in seq "
                                                         "order); `meta.hasMore` then says whether older ones match."),
            schemas.int_query("limit", "At most this many (default 500).", 1, 1000),
        ],
        responses=schemas.responses({200: ws.ObservationListEnvelope}, 400, 409),
    )
    def get(self, request, id: int):
        room = viewable_room(request.user, id)
        require_workspace(room)
        rows = Observation.objects.filter(room=room).exclude(event_type="")
        types = choice_params(request, "type", Observation.EventType.values)
        if types:
            rows = rows.filter(event_type__in=types)
        if request.query_params.get("round") not in (None, ""):
            rows = rows.filter(round=int_param(request, "round", 0, 0, 1_000_000))
        if request.query_params.get("seatId") not in (None, ""):
            rows = rows.filter(seat_id=int_param(request, "seatId", 1, 1, MAX_ID))
        if bool_param(request, "unanswered"):
            rows = rows.filter(~Exists(Observation.objects.filter(responding_to=OuterRef("pk"))))
        rows = rows.filter(seq__gt=int_param(request, "afterSeq", 0, 0, MAX_ID))
        if request.query_params.get("beforeSeq") not in (None, ""):
            rows = rows.filter(seq__lt=int_param(request, "beforeSeq", 1, 1, MAX_ID))
        limit = int_param(request, "limit", 500, 1, 1000)
        latest = bool_param(request, "latest")
        picked = list(rows.order_by("-seq" if latest else "seq")[:limit + 1])  # one more: are there more?
        more = len(picked) > limit
        picked = picked[:limit][::-1] if latest else picked[:limit]
        data = [observation_payload(o) for o in picked]
        return ok(data, meta={"count": len(data), "round": room.round, "status": room.status, "hasMore": more})

    @extend_schema(
        tags=TAG, operation_id="workspace_observations_create", summary="Publish an observation (a person)",
        request=ws.ObservationIn, responses=schemas.responses({201: ws.ObservationEnvelope}, 400, 403, 409, 415),
    )
    def post(self, request, id: int):
        room = participating_room(request.user, id)
        body = json_body(request)
        obs = do_post_observation(room, request.user, event_type=body.get("type"), content=body.get("content"),
                                  responding_to_id=body.get("responding_to_id"), confidence=body.get("confidence"),
                                  manager=can_control(request.user, room))
        return ok(observation_payload(obs), status=201)


def _narratives_by_round(room) -> dict[int, Narrative]:
    return {n.round: n for n in Narrative.objects.filter(room=room).select_related("edited_by")}


class RoundsView(APIView):
    @extend_schema(tags=TAG, operation_id="workspace_rounds_list", summary="Rounds with their narratives",
                   responses=schemas.responses({200: ws.RoundListEnvelope}, 409))
    def get(self, request, id: int):
        room = viewable_room(request.user, id)
        require_workspace(room)
        narratives = _narratives_by_round(room)
        turns = Turn.objects.filter(room=room).order_by("number")
        data = [round_payload(t, narratives.get(t.number)) for t in turns]
        return ok(data, meta={"count": len(data)})


class RoundEndView(APIView):
    @extend_schema(tags=TAG, operation_id="workspace_rounds_end", request=None,
                   summary="End the current round: its narrative is written and the next round starts",
                   responses=schemas.responses({200: ws.RoundEndEnvelope}, 403, 409, 429))
    def post(self, request, id: int):
        room = controllable_room(request.user, id)
        turn = do_end_round(room, request.user)
        return ok(round_payload(turn))


class NarrativesView(APIView):
    @extend_schema(tags=TAG, operation_id="workspace_narratives_list", summary="Every round's narrative",
                   responses=schemas.responses({200: ws.NarrativeListEnvelope}, 409))
    def get(self, request, id: int):
        room = viewable_room(request.user, id)
        require_workspace(room)
        data = [narrative_payload(n) for n in Narrative.objects.filter(room=room).select_related("edited_by").order_by("round")]
        return ok(data, meta={"count": len(data)})


class NarrativeView(APIView):
    @extend_schema(
        tags=TAG, operation_id="workspace_narratives_update", summary="Edit a narrative (the manager)",
        description="Send the `version` you edited. A stale version is 409 `stale_version` with the current "
                    "narrative in `error.details.current`. Logged as invocation `manager.edit_narrative` with before and after.",
        request=ws.NarrativePatchIn, responses=schemas.responses({200: ws.NarrativeEnvelope}, 400, 403, 409, 415),
    )
    def patch(self, request, id: int, nid: int):
        room = controllable_room(request.user, id)
        body = json_body(request)
        narrative = do_edit_narrative(room, row_id(nid), request.user, **body)
        return ok(narrative_payload(narrative))
