"""POST /api/discussions/{id}/start|pause|resume|stop|conclude: the browser's controls over HTTP."""
from drf_spectacular.utils import extend_schema
from rest_framework.views import APIView

from facilitation.actions import lifecycle
from facilitation.api import schemas
from facilitation.api.permissions import controllable_room
from facilitation.api.throttles import LIFECYCLE_SCOPE, ScopedThrottle
from facilitation.api.views.discussions import DiscussionEnvelope, detail_response

ACTIONS = {
    "start": (lifecycle.do_start_discussion, "Start a draft discussion (the facilitator opens)."),
    "pause": (lifecycle.do_pause_discussion, "Pause an active discussion; takes effect between steps."),
    "resume": (lifecycle.do_resume_discussion, "Resume a paused discussion exactly where it stopped."),
    "stop": (lifecycle.do_stop_discussion, "Stop for good: the step in flight is abandoned and the discussion ends."),
    "conclude": (lifecycle.do_conclude_discussion,
                 "Synthesize now from what exists; status becomes concluded when the synthesis is written."),
}


class LifecycleView(APIView):
    """The lifecycle controls of a discussion (owner or staff)."""

    throttle_classes = [ScopedThrottle]
    throttle_scope = LIFECYCLE_SCOPE
    verb = ""

    def post(self, request, id: int):
        room = controllable_room(request.user, id)
        action, _ = ACTIONS[self.verb]
        room = action(room)
        return detail_response(request.user, room)


def lifecycle_view(verb: str):
    _, summary = ACTIONS[verb]

    def post(self, request, id: int):  # a function of its own per verb, for its own schema
        return LifecycleView.post(self, request, id)

    post = extend_schema(
        tags=["discussions"], operation_id=f"discussions_{verb}", summary=summary, request=None,
        description="409 when the transition is not allowed from the current status; nothing changes then.",
        responses=schemas.responses({200: DiscussionEnvelope}, 403, 409, 429),
    )(post)
    return type(f"{verb.capitalize()}View", (LifecycleView,), {"verb": verb, "post": post})
