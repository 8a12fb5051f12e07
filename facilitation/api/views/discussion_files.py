"""POST /api/discussions/import: create a discussion with its transcript from a discussion file."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.parsers import BaseParser
from rest_framework.views import APIView

from facilitation.api import schemas
from facilitation.api.throttles import WRITE_THROTTLES
from facilitation.api.views.discussions import DiscussionEnvelope, detail_response
from facilitation.discussions.file_io import do_import_discussion
from rooms.errors import ValidationFailed

MAX_FILE_BYTES = 2 * 1024 * 1024


class MarkdownParser(BaseParser):
    """The request body as text (``text/markdown`` or ``text/plain``, UTF-8)."""

    media_type = "text/*"

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read(MAX_FILE_BYTES + 1) if stream is not None else b""
        if len(raw) > MAX_FILE_BYTES:
            raise ValidationFailed("The discussion file is larger than 2 MB.", {}, code="too_large")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationFailed("The discussion file must be UTF-8 text.", {}, code="malformed_file") from None


class ImportView(APIView):
    """Anyone signed in may import a file; the facilitator and participants it names must be agents they may use."""

    parser_classes = [MarkdownParser]
    throttle_classes = WRITE_THROTTLES

    @extend_schema(
        tags=["discussions"], operation_id="discussions_import", summary="Import a discussion file",
        description="The body is a discussion file as `GET /api/discussions/{id}/export?format=md` writes it "
                    "(`Content-Type: text/markdown`). A malformed file is 400 naming the line; nothing is written.",
        request={"text/markdown": OpenApiTypes.STR},
        responses=schemas.responses({201: DiscussionEnvelope}, 400, 415, 429),
    )
    def post(self, request):
        text = request.data if isinstance(request.data, str) else ""
        room = do_import_discussion(request.user, text)
        return detail_response(request.user, room, status=201)
