"""GET /api/discussions/{id}/turns and GET /api/discussions/{id}/export."""
from django.http import HttpResponse
from django.utils.text import slugify
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.views import APIView

from facilitation.api import schemas
from facilitation.api.envelope import ok
from facilitation.api.parsing import int_param
from facilitation.api.permissions import viewable_room
from facilitation.discussions.file_io import discussion_file
from facilitation.exports import DOCX_TYPE, MARKDOWN_TYPE, render_docx, render_markdown
from facilitation.goals.minutes import render_run_minutes
from facilitation.workspace import report as workspace_report
from rooms.errors import ValidationFailed
from rooms.models import Observation, Room
from rooms.payloads import turn_payload
from rooms.queries import turns_changed

MAX_SEQ = 2**62
#: Export formats and their file extensions.
FORMATS = {"md": "md", "minutes": "md", "docx": "docx"}
MAX_LIMIT = 1000


class TurnsView(APIView):
    """The transcript of a discussion, for anyone who may view it."""

    @extend_schema(
        tags=["discussions"], operation_id="discussions_turns", summary="The transcript, ordered by seq",
        description="Every contribution, facilitator decision and synthesis. Poll with `afterSeq` set to the "
                    "previous answer's `meta.lastSeq` to get only what is new. A turn keeps its seq when it changes "
                    "later (a chat message edited, deleted or restored): add `changedAfterSeq` (0 the first time, "
                    "then the previous answer's `meta.changedUpTo`) and `meta.changed` lists the turns up to "
                    "`afterSeq` that changed since, as they read now. Without it the answer is as before.",
        parameters=[
            schemas.int_query("afterSeq", "Only turns with a larger seq.", 0, MAX_SEQ),
            schemas.int_query("limit", "At most this many turns (default 500), and at most this many changes read "
                                       "for `meta.changed`.", 1, MAX_LIMIT),
            schemas.int_query("changedAfterSeq", "Also list in `meta.changed` the turns up to `afterSeq` changed after "
                                                 "this seq (the previous answer's `meta.changedUpTo`; 0: every change).",
                              0, MAX_SEQ),
        ],
        responses=schemas.responses({200: schemas.envelope("TurnListEnvelope", schemas.TurnOut(many=True),
                                                           schemas.TurnsMetaOut())}, 400),
    )
    def get(self, request, id: int):
        room = viewable_room(request.user, id)
        after = int_param(request, "afterSeq", 0, 0, MAX_SEQ)
        limit = int_param(request, "limit", 500, 1, MAX_LIMIT)
        changed_after = int_param(request, "changedAfterSeq", -1, 0, MAX_SEQ)
        rows = list(Observation.objects.filter(room=room, seq__gt=after).select_related("seat").order_by("seq")[:limit + 1])
        more = len(rows) > limit
        rows = rows[:limit]
        # Past the room's seq nothing exists yet: lastSeq falls back to it, so a client that asked from too far ahead
        # is not told to keep asking from there (and miss every turn up to its number).
        meta = {"count": len(rows), "afterSeq": after, "lastSeq": rows[-1].seq if rows else min(after, room.seq), "hasMore": more,
                "status": room.status, "round": room.round, "maxRounds": room.max_rounds}
        if changed_after >= 0:  # asked for: room.seq was read before the turns, so every change up to it is in
            changed, up_to, more_changes = turns_changed(room, after, changed_after, room.seq, limit)
            meta.update(changed=[turn_payload(o) for o in changed], changedUpTo=up_to, changedHasMore=more_changes)
        return ok([turn_payload(o) for o in rows], meta=meta)


class ExportView(APIView):
    """The discussion as a file, for anyone who may view it."""

    @extend_schema(
        tags=["discussions"], operation_id="discussions_export", summary="Export the discussion file, or minutes",
        description="`md` (the default) is the discussion file: header metadata and the append-only turns, the text "
                    "`POST /api/discussions/import` reads back (export, import, export gives the same text). "
                    "`minutes` is the same discussion as readable Markdown minutes (conclusion, decisions, action "
                    "items, transcript); `docx` the minutes as a Word document. For a workspace, `minutes` and "
                    "`docx` are its report: each round's narrative, key decisions, blockers and next steps, the "
                    "tasks, what is still open and what the agents spent.",
        parameters=[OpenApiParameter("format", str, enum=list(FORMATS), description="md (default), minutes or docx.")],
        responses=schemas.responses({
            (200, MARKDOWN_TYPE): OpenApiResponse(OpenApiTypes.STR, description="The discussion file, or the minutes."),
            (200, DOCX_TYPE): OpenApiResponse(OpenApiTypes.BINARY, description="Minutes as a Word document."),
        }, 400),
    )
    def get(self, request, id: int):
        room = viewable_room(request.user, id)
        fmt = request.query_params.get("format") or "md"
        if fmt not in FORMATS:
            raise ValidationFailed("Unknown export format.", {"format": ["Must be md, minutes or docx."]})
        name = slugify(room.name)[:60] or "export"
        report = room.kind == Room.Kind.WORKSPACE and fmt != "md"  # a workspace's readable export is its report
        stem = f"workspace-{room.pk}-{name}-report" if report else f"discussion-{room.pk}-{name}"
        if fmt == "md":
            response = HttpResponse(discussion_file(room).encode("utf-8"), content_type=f"{MARKDOWN_TYPE}; charset=utf-8")
        elif fmt == "minutes":
            stem += "" if report else "-minutes"
            text = workspace_report.render_markdown(room) if report else render_markdown(room)
            response = HttpResponse(text.encode("utf-8"), content_type=f"{MARKDOWN_TYPE}; charset=utf-8")
        elif report:
            response = HttpResponse(workspace_report.render_docx(room), content_type=DOCX_TYPE)
        else:
            minutes = render_run_minutes(room) if room.kind == Room.Kind.FACILITATION else render_docx(room)
            response = HttpResponse(minutes, content_type=DOCX_TYPE)
        response["Content-Disposition"] = f'attachment; filename="{stem}.{FORMATS[fmt]}"'
        return response
