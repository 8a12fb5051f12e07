"""GET /api/discussions/{id}/votes and POST /api/discussions/{id}/advance."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from facilitation.actions.phases import do_advance_phase, votes_document
from facilitation.api import schemas
from facilitation.api.envelope import ok
from facilitation.api.parsing import no_fields
from facilitation.api.permissions import controllable_room, viewable_room
from facilitation.api.throttles import WRITE_THROTTLES
from facilitation.api.views.discussions import DiscussionEnvelope, detail_response


class VotesView(APIView):
    @extend_schema(
        tags=["discussions"], operation_id="discussions_votes", summary="Votes and consensus in the current phase",
        description="`{phase, tally: {ready, changes, reject}, votes: [{seatId, name, value, seq}], consensus: "
                    "{reached, reason}}`: the latest vote of each voter in the current phase. During an independent "
                    "ballot the values are `sealed` and the tally empty until everyone has voted. Also `eligible` "
                    "(the voters: speaking seats, and background seats while the phase takes votes), `voted` (how "
                    "many of them have), `rules`, the template's `phases` and `history`: every phase change so far, "
                    "`[{phase, seq}]`, oldest first.",
        responses=schemas.responses({200: OpenApiTypes.OBJECT}),
    )
    def get(self, request, id: int):
        return ok(votes_document(viewable_room(request.user, id)))


class AdvanceView(APIView):
    throttle_classes = WRITE_THROTTLES
    optional_body_methods = ("post",)  # no_fields reads a JSON body (the schema lists its 413)

    @extend_schema(
        tags=["discussions"], operation_id="discussions_advance", summary="Move to the next phase (owner)",
        description="409 without a template, in the last phase or after the discussion ended. Votes start over; "
                    "the previous phase's votes stay in the record. Pushes `discussion:phase`.",
        request=None, responses=schemas.responses({200: DiscussionEnvelope}, 400, 403, 409, 429),
    )
    def post(self, request, id: int):
        room = controllable_room(request.user, id)
        no_fields(request)
        room = do_advance_phase(room, actor=request.user)
        return detail_response(request.user, room)
