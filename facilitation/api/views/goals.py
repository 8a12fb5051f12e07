"""Facilitation runs over REST: GET /api/discussions/{id}/artifact and GET /api/ephemeral-runs (staff)."""
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from facilitation.api import schemas
from facilitation.api.envelope import ok
from facilitation.api.permissions import viewable_room
from facilitation.goals.shapes import artifact_shape, run_shape
from rooms.access import can_control
from rooms.errors import Forbidden, NotFound
from rooms.models import FacilitationRun
from rooms.queries import telegram_link

TAG = ["facilitation"]


def run_fields(user, room) -> dict:
    """What a facilitation room's detail adds: its run; the join code (and the Telegram link that carries
    it, once the bot's name is known) only for its owner and staff."""
    run = FacilitationRun.objects.filter(room=room).first()
    if run is None:
        return {"run": None}
    shape = run_shape(run)
    if not can_control(user, room):
        shape["joinCode"] = None
    shape["telegramLink"] = telegram_link("startgroup", shape["joinCode"])
    return {"run": shape, "joinCode": shape["joinCode"]}


class ArtifactView(APIView):
    @extend_schema(tags=TAG, operation_id="discussions_artifact", summary="The outcome a facilitation run builds",
                   description="E.g. `{roles: {Lead: \"ana\", ...}, done, missing, confirmedBy}`.",
                   responses=schemas.responses({200: OpenApiTypes.OBJECT}))
    def get(self, request, id: int):
        room = viewable_room(request.user, id)
        run = FacilitationRun.objects.filter(room=room).first()
        if run is None:
            protocol = (room.engine_state or {}).get("facilitationProtocol")
            if protocol is None:
                raise NotFound("This discussion has no facilitation run.")
            return ok({**protocol, "done": protocol.get("state") == "completed", "missing": [], "reaped": True})
        return ok(artifact_shape(run))


def _run_rows(rows) -> list[dict]:
    now = timezone.now()
    return [{"discussionId": r.room_id, "name": r.room.name, "owner": r.room.owner.get_username(),
             "origin": r.origin, "state": r.state, "pattern": r.pattern, "expiresAt": r.expires_at.isoformat(),
             "ttlSecondsLeft": max(0, int((r.expires_at - now).total_seconds())),
             "deadline": r.deadline.isoformat(), "link": f"/discussions/{r.room_id}/"}
            for r in rows.select_related("room", "room__owner").order_by("expires_at")]


class EphemeralRunsView(APIView):
    @extend_schema(tags=TAG, operation_id="ephemeral_runs", summary="Live ephemeral facilitation runs (staff)",
                   responses=schemas.responses({200: OpenApiTypes.OBJECT}, 403))
    def get(self, request):
        if not request.user.is_staff:
            raise Forbidden("Only staff see ephemeral runs.")
        return ok(_run_rows(FacilitationRun.objects.filter(origin=FacilitationRun.Origin.EPHEMERAL)))


class MyRunsView(APIView):
    @extend_schema(tags=TAG, operation_id="my_facilitation_runs", summary="Your own facilitation runs",
                   description="The runs you set up that have not expired (ephemeral runs stay out of the discussion list).",
                   responses=schemas.responses({200: OpenApiTypes.OBJECT}))
    def get(self, request):
        mine = FacilitationRun.objects.filter(room__owner=request.user, expires_at__gt=timezone.now())
        return ok(_run_rows(mine))
