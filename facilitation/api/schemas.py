"""Response schemas for the OpenAPI document: the envelope around each shape in ``shapes``.

These serializers only describe; ``shapes`` builds the real dicts. The schemathesis
run in tests/api checks that the two agree.
"""
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import serializers

from rooms.models import Observation, Room, RoomMember, Seat

# --- shapes --------------------------------------------------------------------------


class ModeratorOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    alias = serializers.CharField()


class ParticipantOut(serializers.Serializer):
    seat_id = serializers.IntegerField()
    agent_id = serializers.IntegerField(allow_null=True)
    username = serializers.CharField(allow_null=True)
    name = serializers.CharField()
    role = serializers.ChoiceField(choices=Seat.Role.choices)
    position = serializers.IntegerField()
    is_active = serializers.BooleanField()
    tokens_used = serializers.IntegerField()
    persona_id = serializers.IntegerField(allow_null=True, help_text="The persona this seat works with now.")
    role_id = serializers.IntegerField(allow_null=True, help_text="The functional role this seat works with now.")
    version = serializers.IntegerField(help_text="Send it back with PATCH .../participants/{seatId}.")


class UsageOut(serializers.Serializer):
    calls = serializers.IntegerField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cache_read_tokens = serializers.IntegerField()
    cache_write_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()
    cost_usd = serializers.FloatField()


class ConclusionCheckOut(serializers.Serializer):
    attempts = serializers.IntegerField(help_text="Drafts of the conclusion the facilitator wrote (0: written without a model).")
    redone = serializers.IntegerField(help_text="Drafts written again because items were left out.")
    gaps = serializers.ListField(child=serializers.DictField(), help_text="Items still left out (id, kind, by, text), listed under the conclusion.")


class AnalyticsOut(serializers.Serializer):
    airtime = serializers.ListField(child=serializers.DictField(), help_text="Per speaking seat: seatId, name, role, turns, words, share of the words.")
    gini = serializers.FloatField(help_text="Gini coefficient of the airtime shares (0: even).")
    devils_advocate_objections = serializers.ListField(child=serializers.DictField(), help_text="Concerns and questions the devil's advocate raised, with their status.")
    open_questions = serializers.ListField(child=serializers.DictField())
    open_concerns = serializers.ListField(child=serializers.DictField())
    standing_rejects = serializers.ListField(child=serializers.DictField())
    corrections = serializers.DictField(child=serializers.IntegerField(), help_text="Corrections of facilitator decisions, by rule.")
    fallbacks = serializers.DictField(child=serializers.IntegerField(), help_text="Fallback decisions, by reason.")
    conclusion_check = ConclusionCheckOut(allow_null=True, help_text="The conclusion check; null until the room concluded.")


class DiscussionSummaryOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    topic = serializers.CharField()
    kind = serializers.ChoiceField(choices=Room.Kind.choices)
    format = serializers.ChoiceField(choices=Room.Format.choices)
    status = serializers.ChoiceField(choices=Room.Status.choices)
    round = serializers.IntegerField()
    max_rounds = serializers.IntegerField()
    moderator = ModeratorOut(allow_null=True)
    owner = serializers.CharField(help_text="The owner's username.")
    access = serializers.ChoiceField(choices=["owner", "staff", "participant", "viewer"], help_text="Your access.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    ended_at = serializers.DateTimeField(allow_null=True)


class ConsensusOut(serializers.Serializer):
    threshold = serializers.FloatField(min_value=0, max_value=1, help_text="Share of READY votes (default 0.67).")
    reject_blocks = serializers.BooleanField(help_text="A standing REJECT blocks consensus (default true).")
    human_required = serializers.BooleanField(help_text="No consensus without a person's vote (default false).")


class DiscussionOut(DiscussionSummaryOut):
    conclusion = serializers.CharField(allow_blank=True)
    participants = ParticipantOut(many=True)
    rehearsal = serializers.BooleanField(help_text="True when any text came from the offline rehearsal model.")
    last_seq = serializers.IntegerField(help_text="The room's latest event sequence number.")
    budget_tokens = serializers.IntegerField(allow_null=True)
    budget_usd = serializers.FloatField(allow_null=True)
    usage = UsageOut()
    analytics = AnalyticsOut(help_text="Quality of the discussion: airtime balance, objections, open items, corrections.")
    template = serializers.CharField(allow_null=True, help_text="feature, code_review or adr; null without phases.")
    phase = serializers.CharField(allow_null=True, help_text="The current phase of the template.")
    consensus = ConsensusOut()
    max_parallel = serializers.IntegerField(min_value=1, max_value=3)
    turn_policy = serializers.DictField(allow_null=True, help_text="Workspace rooms: {maxEvents, maxSeconds}.")


class SpeakerOut(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True, help_text="The seat id.")
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=Observation.AuthorKind.choices)
    role = serializers.CharField()


class TurnOut(serializers.Serializer):
    id = serializers.IntegerField()
    seq = serializers.IntegerField()
    round = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=Observation.Kind.choices)
    speaker = SpeakerOut()
    content = serializers.CharField(allow_blank=True)
    markers = serializers.ListField(child=serializers.DictField())
    status = serializers.ChoiceField(choices=Observation.Status.choices)
    provider = serializers.CharField(allow_blank=True)
    rehearsal = serializers.BooleanField()
    tokens = serializers.IntegerField()
    data = serializers.DictField(help_text="For decisions: decision, nextParticipantId, question, reasoning, fallback.")
    created_at = serializers.DateTimeField(allow_null=True)


class MemberOut(serializers.Serializer):
    username = serializers.CharField()
    access = serializers.ChoiceField(choices=RoomMember.Access.choices)
    added_at = serializers.DateTimeField()


class RefOut(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    name = serializers.CharField()


class RoleOut(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    name = serializers.CharField()
    function = serializers.CharField(allow_blank=True)
    base_prompt = serializers.CharField(allow_blank=True)
    is_builtin = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class PersonaOut(serializers.Serializer):
    id = serializers.IntegerField()
    key = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    style = serializers.CharField(allow_blank=True)
    prompt = serializers.CharField(allow_blank=True)
    is_facilitator = serializers.BooleanField()
    philosophy = serializers.CharField(allow_blank=True)
    best_for = serializers.ListField(child=serializers.CharField())
    model_tier = serializers.CharField(allow_blank=True)
    is_builtin = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class AgentOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    alias = serializers.CharField(allow_blank=True)
    description = serializers.CharField(allow_blank=True)
    is_facilitator = serializers.BooleanField()
    role_id = serializers.IntegerField(allow_null=True)
    role = RefOut(allow_null=True)
    persona_id = serializers.IntegerField(allow_null=True)
    persona = RefOut(allow_null=True)
    provider = serializers.CharField(allow_blank=True)
    model = serializers.CharField(allow_blank=True)
    expertise = serializers.ListField(child=serializers.CharField())
    concerns = serializers.ListField(child=serializers.CharField())
    budget_tokens = serializers.IntegerField(allow_null=True)
    budget_usd = serializers.FloatField(allow_null=True)
    tokens_used = serializers.IntegerField()
    cost_usd = serializers.FloatField()
    is_builtin = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class DeletedOut(serializers.Serializer):
    id = serializers.JSONField(help_text="The id (or username) of what was deleted.")
    deleted = serializers.BooleanField()


class PageMetaOut(serializers.Serializer):
    page = serializers.IntegerField()
    page_size = serializers.IntegerField()
    total = serializers.IntegerField()
    total_pages = serializers.IntegerField()
    has_next = serializers.BooleanField()
    has_previous = serializers.BooleanField()


class DiscussionListMetaOut(PageMetaOut):
    counts = serializers.DictField(child=serializers.IntegerField(),
                                   help_text="Discussions you may see per status (after the format and kind filters).")


class TurnsMetaOut(serializers.Serializer):
    count = serializers.IntegerField()
    after_seq = serializers.IntegerField()
    last_seq = serializers.IntegerField(help_text="Pass it as afterSeq to get what comes next.")
    has_more = serializers.BooleanField()
    status = serializers.ChoiceField(choices=Room.Status.choices)
    round = serializers.IntegerField()
    max_rounds = serializers.IntegerField()


class ErrorOut(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    details = serializers.DictField(required=False, help_text="Field name -> messages, or other specifics.")


ErrorEnvelope = inline_serializer("ErrorEnvelope", {
    "success": serializers.BooleanField(),
    "error": ErrorOut(),
})


# --- envelopes -------------------------------------------------------------------------

def envelope(name: str, data, meta=None):
    fields = {"success": serializers.BooleanField(), "data": data}
    if meta is not None:
        fields["meta"] = meta
    return inline_serializer(name, fields)


ERROR_TEXT = {
    400: "Invalid input; `error.details` names the fields.",
    401: "Not authenticated.",
    403: "Authenticated but not allowed (e.g. a viewer changing a discussion, or a built-in preset).",
    404: "Not found, or not visible to you.",
    405: "Method not allowed.",
    409: "Not allowed in the current state.",
    415: "Unsupported media type.",
    429: "Too many requests; retry after `Retry-After` seconds.",
}


def responses(ok: dict, *errors: int) -> dict:
    """``ok`` maps success statuses to schemas; ``errors`` lists the documented error statuses."""
    result = dict(ok)
    for status in sorted({401, 404, 405, *errors}):
        result[status] = OpenApiResponse(ErrorEnvelope, description=ERROR_TEXT[status])
    return result


# --- query parameters ----------------------------------------------------------------------

def int_query(name: str, description: str, lo: int, hi: int) -> OpenApiParameter:
    return OpenApiParameter(name, {"type": "integer", "minimum": lo, "maximum": hi}, description=description)


PAGE_PARAMS = [
    int_query("page", "Page number, from 1.", 1, 1_000_000),
    int_query("pageSize", "Items per page (default 20).", 1, 100),
]
