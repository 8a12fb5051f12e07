"""The API's resources, each one serializer that renders it and documents it, and the envelopes
around them for the OpenAPI document.

A resource's fields are listed once, here (rooms, turns, chat rows: ``rooms.serializers``;
workspace rows: ``facilitation.workspace.serializers``); ``shapes`` only calls these. The
schemathesis run and tests/api/test_one_description.py check that answers and schema agree.
"""
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import serializers
from rest_framework.fields import SkipField

from facilitation.api.goal_schemas import FacilitationRunOut
from facilitation.deliberation.consensus import ConsensusRules
from facilitation.goals.shapes import run_shape
from facilitation.transcript import analytics_of, usage_of
from facilitation.workspace.actions.rounds import policy_of
from facilitation.workspace.actions.status import IDLE, IDLE_ROUNDS, IDLE_TIME, last_idle_pause
from rooms.models import FacilitationRun, Observation, Room, RoomMember, Seat
from rooms.queries import telegram_link
from rooms.serializers import ListOf, Out, SpeakerOut, Timestamp, TurnOut, agent_owner

__all__ = ["SpeakerOut", "TurnOut"]  # documented here too: the transcript and comments answer them

# --- resources ------------------------------------------------------------------------


class ModeratorOut(Out):
    id = serializers.IntegerField()
    name = serializers.CharField()
    alias = serializers.CharField()
    owner = serializers.CharField(allow_null=True, help_text=(
        "The username of whoever made the facilitator agent; null for a built-in one, or an owner who is gone."))
    is_builtin = serializers.BooleanField(help_text="The facilitator is a built-in preset.")

    @staticmethod
    def get_owner(agent, context) -> str | None:
        return agent_owner(agent)


class ParticipantOut(Out):
    seat_id = serializers.IntegerField(source="pk")
    agent_id = serializers.IntegerField(allow_null=True)
    alias = serializers.CharField(allow_null=True, help_text=(
        "The agent's alias (null for a person's seat): two agents of one name are told apart by it."))
    username = serializers.CharField(allow_null=True)
    name = serializers.CharField(source="display_name")
    role = serializers.ChoiceField(choices=Seat.Role.choices)
    position = serializers.IntegerField()
    is_active = serializers.BooleanField()
    tokens_used = serializers.IntegerField()
    persona_id = serializers.IntegerField(source="persona_in_use_id", allow_null=True,
                                          help_text="The persona this seat works with now.")
    role_id = serializers.IntegerField(source="role_in_use_id", allow_null=True,
                                       help_text="The functional role this seat works with now.")
    persona_override_id = serializers.IntegerField(source="persona_id", allow_null=True, help_text=(
        "Workspace seats: the persona chosen for the seat itself (when the room was created, or by a swap); null "
        "when it works with its agent's own, which `personaId` then is."))
    role_override_id = serializers.IntegerField(source="work_role_id", allow_null=True, help_text=(
        "Workspace seats: the functional role chosen for the seat itself; null when it works with its agent's own, "
        "which `roleId` then is."))
    version = serializers.IntegerField(help_text="Send it back with PATCH .../participants/{seatId}.")
    owner = serializers.CharField(allow_null=True, help_text=(
        "The username of whoever made the seat's agent (as `owner` of a discussion names its owner): two agents "
        "of one name are told apart by it; null for a built-in agent, a person's seat, or an owner who is gone."))
    is_builtin = serializers.BooleanField(help_text="The seat's agent is a built-in preset (false for a person's seat).")

    @staticmethod
    def get_alias(seat: Seat, context) -> str | None:
        return seat.agent.alias if seat.agent_id else None

    @staticmethod
    def get_owner(seat: Seat, context) -> str | None:
        return agent_owner(seat.agent) if seat.agent_id else None

    @staticmethod
    def get_is_builtin(seat: Seat, context) -> bool:
        return bool(seat.agent_id and seat.agent.is_builtin)

    @staticmethod
    def get_username(seat: Seat, context) -> str | None:
        return seat.user.get_username() if seat.user_id else None


# Rendered from ``facilitation.transcript.usage_of`` (a mapping with these keys).
class UsageOut(Out):
    calls = serializers.IntegerField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cache_read_tokens = serializers.IntegerField()
    cache_write_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()
    cost_usd = serializers.FloatField()


class ConclusionCheckOut(Out):
    attempts = serializers.IntegerField(help_text="Drafts of the conclusion the facilitator wrote (0: written without a model).")
    redone = serializers.IntegerField(help_text="Drafts written again because items were left out.")
    gaps = serializers.ListField(child=serializers.DictField(), help_text="Items still left out (id, kind, by, text), listed under the conclusion.")


# Rendered from ``facilitation.deliberation.analytics`` (a mapping with these keys).
class AnalyticsOut(Out):
    airtime = serializers.ListField(child=serializers.DictField(), help_text="Per speaking seat: seatId, name, role, turns, words, share of the words.")
    gini = serializers.FloatField(help_text="Gini coefficient of the airtime shares (0: even).")
    devils_advocate_objections = serializers.ListField(child=serializers.DictField(), help_text="Concerns and questions the devil's advocate raised, with their status.")
    open_questions = serializers.ListField(child=serializers.DictField())
    open_concerns = serializers.ListField(child=serializers.DictField())
    standing_rejects = serializers.ListField(child=serializers.DictField())
    corrections = serializers.DictField(child=serializers.IntegerField(), help_text="Corrections of facilitator decisions, by rule.")
    fallbacks = serializers.DictField(child=serializers.IntegerField(), help_text="Fallback decisions, by reason.")
    conclusion_check = ConclusionCheckOut(allow_null=True, help_text="The conclusion check; null until the room concluded.")


# One room in the list. ``access`` (the caller's) comes in the context.
class DiscussionSummaryOut(Out):
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
    created_at = Timestamp()
    updated_at = Timestamp()
    started_at = Timestamp(allow_null=True)
    ended_at = Timestamp(allow_null=True)
    pause_reason = serializers.CharField(allow_null=True, help_text=(
        "Why a paused workspace is paused when no person paused it: \"idle\" (nobody acted in it for "
        "CONVENE_WORKSPACE_IDLE_PAUSE seconds) or \"budget\" (its budget is used up); null otherwise."))

    @staticmethod
    def get_owner(room: Room, context) -> str:
        return room.owner.get_username()

    @staticmethod
    def get_pause_reason(room: Room, context) -> str | None:
        return (room.pause_reason or None) if room.status == Room.Status.PAUSED else None

    @staticmethod
    def get_access(room: Room, context) -> str:
        return context["access"]


# Rendered from ``facilitation.workspace.actions.status.last_idle_pause`` (a mapping, read by its keys).
class IdlePauseOut(Out):
    triggers = ListOf(child=serializers.ChoiceField(choices=[IDLE_TIME, IDLE_ROUNDS]), help_text=(
        "What made the workspace pause itself: `time` (nobody acted in it for `idleSeconds`), `rounds` (`idleRounds` "
        "rounds in a row ended by themselves since a person last acted), or both; empty for a pause logged before "
        "this was kept."))
    idle_seconds = serializers.IntegerField(allow_null=True, help_text="The idle limit reached, in seconds; null unless `time` fired.")
    idle_rounds = serializers.IntegerField(allow_null=True, help_text="The number of rounds reached; null unless `rounds` fired.")

    @staticmethod
    def get_triggers(pause, context) -> list[str]:
        return list(pause.get("triggers") or [])

    @staticmethod
    def get_idle_seconds(pause, context) -> int | None:
        return pause.get("idleSeconds")

    @staticmethod
    def get_idle_rounds(pause, context) -> int | None:
        return pause.get("idleRounds")


# Rendered from ``ConsensusRules``.
class ConsensusOut(Out):
    threshold = serializers.FloatField(min_value=0, max_value=1, help_text="Share of READY votes (default 0.67).")
    reject_blocks = serializers.BooleanField(help_text="A standing REJECT blocks consensus (default true).")
    human_required = serializers.BooleanField(help_text="No consensus without a person's vote (default false).")


class DiscussionOut(DiscussionSummaryOut):
    conclusion = serializers.CharField(allow_blank=True)
    participants = ParticipantOut(many=True)
    rehearsal = serializers.BooleanField(help_text="True when any text came from the offline rehearsal model.")
    last_seq = serializers.IntegerField(source="seq", help_text="The room's latest event sequence number.")
    budget_tokens = serializers.IntegerField(allow_null=True)
    budget_usd = serializers.FloatField(allow_null=True)
    usage = UsageOut()
    analytics = AnalyticsOut(help_text="Quality of the discussion: airtime balance, objections, open items, corrections.")
    template = serializers.CharField(allow_null=True, help_text="feature, code_review or adr; null without phases.")
    phase = serializers.CharField(allow_null=True, help_text="The current phase of the template.")
    consensus = ConsensusOut()
    max_parallel = serializers.IntegerField(min_value=1, max_value=3)
    turn_policy = serializers.DictField(allow_null=True, help_text="Workspace rooms: {maxEvents, maxSeconds}.")
    run = FacilitationRunOut(required=False, allow_null=True, help_text=(
        "Facilitation runs only (`kind: \"facilitation\"`; absent otherwise): the run's pattern, slots, report "
        "targets, deadline, state and join code; null once an ephemeral run was reaped (its protocol stays: "
        "`GET .../artifact`)."))
    join_code = serializers.CharField(required=False, allow_null=True, help_text=(
        "Facilitation runs only (absent otherwise): the code that starts the run in a chat group "
        "(`/facilitator start CODE`), the same as `run.joinCode`; its owner and staff see it, everyone else null "
        "(null too once the run was reaped)."))
    idle_pause = IdlePauseOut(allow_null=True, help_text=(
        "While a workspace is paused for being idle (`pauseReason: \"idle\"`): what made it pause itself; null "
        "otherwise."))

    @staticmethod
    def get_participants(room: Room, context) -> list[Seat]:
        seats = room.seats.select_related("agent__created_by", "user").order_by("position", "id")
        return [s for s in seats if s.role != Seat.Role.FACILITATOR]

    @staticmethod
    def get_rehearsal(room: Room, context) -> bool:
        return Observation.objects.filter(room=room, provider="rehearsal").exists()

    @staticmethod
    def get_usage(room: Room, context) -> dict:
        return usage_of(room)

    @staticmethod
    def get_analytics(room: Room, context) -> dict:
        return analytics_of(room)

    @staticmethod
    def get_template(room: Room, context) -> str | None:
        return room.template or None

    @staticmethod
    def get_phase(room: Room, context) -> str | None:
        return room.phase or None

    @staticmethod
    def get_consensus(room: Room, context) -> ConsensusRules:
        return ConsensusRules.load(room.consensus)

    @staticmethod
    def get_turn_policy(room: Room, context) -> dict | None:
        return policy_of(room) if room.kind == Room.Kind.WORKSPACE else None

    @staticmethod
    def get_idle_pause(room: Room, context) -> dict | None:
        paused_idle = room.status == Room.Status.PAUSED and room.pause_reason == IDLE
        return last_idle_pause(room) if paused_idle and room.kind == Room.Kind.WORKSPACE else None

    @staticmethod
    def get_run(room: Room, context) -> dict | None:
        run = _facilitation_run(room)
        if run is None:
            return None
        shape = {**run_shape(run), "joinCode": _join_code(run, context)}
        shape["telegramLink"] = telegram_link("startgroup", shape["joinCode"])
        return shape

    @staticmethod
    def get_join_code(room: Room, context) -> str | None:
        run = _facilitation_run(room)
        return None if run is None else _join_code(run, context)


def _facilitation_run(room: Room) -> FacilitationRun | None:
    """A facilitation room's run (None once reaped; read once per room object); other kinds have no
    ``run`` and no ``joinCode`` key."""
    if room.kind != Room.Kind.FACILITATION:
        raise SkipField
    return getattr(room, "run", None)  # the reverse one-to-one caches its row, or that there is none


def _join_code(run: FacilitationRun, context) -> str | None:
    """The join code for the run's owner and staff (those who control the room); None for everyone else."""
    return run.join_code if context["access"] in ("owner", "staff") else None


class MemberOut(Out):
    username = serializers.CharField()
    access = serializers.ChoiceField(choices=RoomMember.Access.choices)
    added_at = Timestamp()

    @staticmethod
    def get_username(member: RoomMember, context) -> str:
        return member.user.get_username()


class RefOut(Out):
    id = serializers.IntegerField()
    key = serializers.CharField()
    name = serializers.CharField()


class RoleOut(Out):
    id = serializers.IntegerField()
    key = serializers.CharField()
    name = serializers.CharField()
    function = serializers.CharField(allow_blank=True)
    base_prompt = serializers.CharField(allow_blank=True)
    is_builtin = serializers.BooleanField()
    created_at = Timestamp()
    updated_at = Timestamp()


class PersonaOut(Out):
    id = serializers.IntegerField()
    key = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    style = serializers.CharField(allow_blank=True)
    prompt = serializers.CharField(allow_blank=True)
    is_facilitator = serializers.BooleanField()
    philosophy = serializers.CharField(allow_blank=True)
    best_for = ListOf(child=serializers.CharField())
    model_tier = serializers.CharField(allow_blank=True)
    is_builtin = serializers.BooleanField()
    created_at = Timestamp()
    updated_at = Timestamp()


class AgentOut(Out):
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
    expertise = ListOf(child=serializers.CharField())
    concerns = ListOf(child=serializers.CharField())
    budget_tokens = serializers.IntegerField(allow_null=True)
    budget_usd = serializers.FloatField(allow_null=True)
    tokens_used = serializers.IntegerField()
    cost_usd = serializers.FloatField()
    is_builtin = serializers.BooleanField()
    owner = serializers.CharField(allow_null=True, help_text=(
        "The username of whoever made the agent (as `owner` of a discussion names its owner); null for a built-in "
        "agent, or an owner who is gone."))
    created_at = Timestamp()
    updated_at = Timestamp()

    @staticmethod
    def get_owner(agent, context) -> str | None:
        return agent_owner(agent)


class DeletedOut(serializers.Serializer):
    id = serializers.JSONField(help_text="The id (or username) of what was deleted.")
    deleted = serializers.BooleanField()


class PageMetaOut(serializers.Serializer):
    page = serializers.IntegerField(help_text="This page's number, from 1.")
    page_size = serializers.IntegerField(help_text="Items per page.")
    total = serializers.IntegerField(help_text="Items on every page together (after the filters).")
    total_pages = serializers.IntegerField()
    has_next = serializers.BooleanField(help_text="Items come after this page: ask for page + 1 to get more.")
    has_previous = serializers.BooleanField(
        help_text="Items come before this page: true on every page after the first of a list with items, a page past "
                  "the end included; false on the first page and on every page of an empty list.")


class CountedPageMetaOut(PageMetaOut):
    count = serializers.IntegerField(help_text="Items on this page.")


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
    changed = TurnOut(many=True, required=False,
                      help_text="Only with changedAfterSeq: the turns up to afterSeq changed (edited, deleted or "
                                "restored) after changedAfterSeq, as they read now, ordered by seq.")
    changed_up_to = serializers.IntegerField(required=False, help_text="Only with changedAfterSeq: pass it as "
                                                                       "changedAfterSeq next time.")
    changed_has_more = serializers.BooleanField(required=False, help_text="Only with changedAfterSeq: more changes "
                                                                          "follow; ask again with changedUpTo.")


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
    413: "The body is larger than 2 MB (`too_large`).",
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


def page_params(default: int = 20, maximum: int = 100, alias: str | None = None) -> list[OpenApiParameter]:
    """``page`` and ``pageSize`` (``facilitation.api.pagination``); ``alias``: the list's older name for pageSize."""
    params = [
        int_query("page", "Page number, from 1. A page past the end is an empty list.", 1, 1_000_000),
        int_query("pageSize", f"Items per page (default {default}).", 1, maximum),
    ]
    if alias:
        params.append(int_query(alias, f"The older name of pageSize, read when pageSize is not sent (default {default}).",
                                1, maximum))
    return params


PAGE_PARAMS = page_params()
