"""POST /api/discussions/import: create a discussion with its transcript from a discussion file."""
from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiRequest, extend_schema
from rest_framework.parsers import BaseParser
from rest_framework.views import APIView

from facilitation.api import schemas
from facilitation.api.parsers import BodyTooLarge
from facilitation.api.throttles import WRITE_THROTTLES
from facilitation.api.views.discussions import DiscussionEnvelope, detail_response
from facilitation.discussions.file_io import EXAMPLE_FILE, do_import_discussion
from rooms.errors import ValidationFailed


class MarkdownParser(BaseParser):
    """The request body as text (``text/markdown`` or ``text/plain``, UTF-8). Over ``API_MAX_BODY_BYTES`` it is
    413 ``too_large``, as a JSON body is."""

    media_type = "text/*"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_MAX_BODY_BYTES
        request = (parser_context or {}).get("request")
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
        except ValueError:
            length = 0
        if length > limit:
            raise BodyTooLarge(f"The discussion file is larger than {limit} bytes.")
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise BodyTooLarge(f"The discussion file is larger than {limit} bytes.")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationFailed("The discussion file must be UTF-8 text.", {}, code="malformed_file") from None


class ImportView(APIView):
    """Anyone signed in may import a file; the facilitator and participants it names must be agents they may use."""

    parser_classes = [MarkdownParser]
    throttle_classes = WRITE_THROTTLES
    request_body_required = True  # an empty body is a malformed file (400)

    @extend_schema(
        tags=["discussions"], operation_id="discussions_import", summary="Import a discussion file",
        description="The body is a discussion file as `GET /api/discussions/{id}/export?format=md` writes it "
                    "(`Content-Type: text/markdown`), starting with its header line `<!-- convene discussion file v1 -->`. "
                    "400 `malformed_file` (with `error.details.line` when a line is wrong), `unknown_facilitator` or "
                    "`unknown_participant` (the file names agents you may not use); a file over 2 MB is 413 "
                    "`too_large`. Nothing is written then.",
        request={"text/markdown": OpenApiRequest(OpenApiTypes.STR, examples=[
            OpenApiExample("A discussion file", value=EXAMPLE_FILE, request_only=True,
                           description="Facilitator and participants are matched with agents you may use "
                                       "(participants by alias first, then by name).")])},
        responses=schemas.responses({201: DiscussionEnvelope}, 400, 413, 415, 429),
    )
    def post(self, request):
        text = request.data if isinstance(request.data, str) else ""
        room = do_import_discussion(request.user, text)
        return detail_response(request.user, room, status=201)
