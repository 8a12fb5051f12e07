"""POST /api/discussions/{id}/start|pause|resume|stop|conclude: the browser's controls over HTTP."""
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from facilitation.actions import lifecycle
from facilitation.api import schemas
from facilitation.api.parsing import no_fields
from facilitation.api.permissions import controllable_room
from facilitation.api.throttles import LIFECYCLE_SCOPE, WRITE_THROTTLES, ScopedThrottle
from facilitation.api.views.discussions import DiscussionEnvelope, detail_response
from facilitation.controls import control_room


class LifecycleView(APIView):
    """The lifecycle controls of a discussion (owner or staff)."""

    throttle_classes = [ScopedThrottle, *WRITE_THROTTLES]
    throttle_scope = LIFECYCLE_SCOPE
    optional_body_methods = ("post",)  # no_fields reads a JSON body (the schema lists its 413)
    verb = ""

    def post(self, request, id: int):
        room = controllable_room(request.user, id)
        no_fields(request)
        room = control_room(room, self.verb, request.user)
        return detail_response(request.user, room)


def lifecycle_view(verb: str):
    summary = lifecycle.TRANSITIONS[verb].summary

    def post(self, request, id: int):  # a function of its own per verb, for its own schema
        return LifecycleView.post(self, request, id)

    post = extend_schema(
        tags=["discussions"], operation_id=f"discussions_{verb}", summary=summary, request=None,
        description="409 when the transition is not allowed from the current status; nothing changes then. "
                    "No body is needed; one sent as JSON must be a JSON object (malformed JSON is 400 `parse_error`).",
        responses=schemas.responses({200: DiscussionEnvelope}, 400, 403, 409, 429),
    )(post)
    return type(f"{verb.capitalize()}View", (LifecycleView,), {"verb": verb, "post": post})
