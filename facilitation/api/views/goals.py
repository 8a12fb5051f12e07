"""Facilitation runs over REST: GET /api/discussions/{id}/artifact, GET /api/ephemeral-runs (staff) and
GET /api/me/facilitation-runs (both paged like every list whose rows are usually wanted at once: ``?page=``,
``?pageSize=`` up to 100, default 100). A run in a discussion's detail is ``schemas.DiscussionOut``'s ``run`` and ``joinCode``."""
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from facilitation.api import schemas
from facilitation.api.envelope import ok
from facilitation.api.goal_schemas import ArtifactOut, FacilitationRunRowOut
from facilitation.api.pagination import MAX_PAGE_SIZE, paginate
from facilitation.api.permissions import viewable_room
from facilitation.goals.shapes import artifact_shape
from rooms.errors import Forbidden, NotFound
from rooms.models import FacilitationRun

TAG = ["facilitation"]
PAGE_SIZE = MAX_PAGE_SIZE  # one's own runs on one page, as before the list was paged, for nearly everyone
PagedRunListEnvelope = schemas.envelope("FacilitationRunPageEnvelope", FacilitationRunRowOut(many=True),
                                        schemas.PageMetaOut())


class ArtifactView(APIView):
    @extend_schema(tags=TAG, operation_id="discussions_artifact", summary="The outcome a facilitation run builds",
                   description="The artifact's keys depend on the pattern: `roles` (role_assignment: each role, named "
                               "exactly as in the run's slots, and who holds it), `choice` and `proposals` (decision), "
                               "`items` (list); then `done`, `missing`, `confirmedBy`, `state`, `version` and "
                               "`needsConfirmationFrom`. Once an ephemeral run was reaped, the protocol the room kept, "
                               "with `reaped: true`. 404 for a discussion without a run.",
                   responses=schemas.responses({200: schemas.envelope("ArtifactEnvelope", ArtifactOut())}))
    def get(self, request, id: int):
        room = viewable_room(request.user, id)
        run = FacilitationRun.objects.filter(room=room).first()
        if run is None:
            protocol = (room.engine_state or {}).get("facilitationProtocol")
            if protocol is None:
                raise NotFound("This discussion has no facilitation run.")
            # The result at the top, where a live run's artifact has it (``artifact`` kept as it was).
            return ok({**protocol, **(protocol.get("artifact") or {}), "done": protocol.get("state") == "completed",
                       "missing": [], "reaped": True})
        return ok(artifact_shape(run))


def _run_rows(rows) -> list[dict]:
    now = timezone.now()
    return [FacilitationRunRowOut.render(r, now=now) for r in rows]


class EphemeralRunsView(APIView):
    @extend_schema(tags=TAG, operation_id="ephemeral_runs", summary="Live ephemeral facilitation runs (staff)",
                   description=f"Everyone's ephemeral runs, soonest to expire first, {PAGE_SIZE} to a page unless "
                               "`pageSize` says otherwise.",
                   parameters=schemas.page_params(PAGE_SIZE),
                   responses=schemas.responses({200: PagedRunListEnvelope}, 400, 403))
    def get(self, request):
        if not request.user.is_staff:
            raise Forbidden("Only staff see ephemeral runs.")
        runs = FacilitationRun.objects.filter(origin=FacilitationRun.Origin.EPHEMERAL)
        rows, meta = paginate(request, runs.select_related("room", "room__owner").order_by("expires_at", "id"),
                              default_size=PAGE_SIZE)
        return ok(_run_rows(rows), meta=meta)


class MyRunsView(APIView):
    @extend_schema(tags=TAG, operation_id="my_facilitation_runs", summary="Your own facilitation runs",
                   description="The runs you set up that have not expired (ephemeral runs stay out of the discussion "
                               f"list), soonest to expire first, {PAGE_SIZE} to a page unless `pageSize` says otherwise.",
                   parameters=schemas.page_params(PAGE_SIZE),
                   responses=schemas.responses({200: PagedRunListEnvelope}, 400))
    def get(self, request):
        mine = FacilitationRun.objects.filter(room__owner=request.user, expires_at__gt=timezone.now())
        rows, meta = paginate(request, mine.select_related("room", "room__owner").order_by("expires_at", "id"),
                              default_size=PAGE_SIZE)
        return ok(_run_rows(rows), meta=meta)
