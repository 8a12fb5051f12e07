"""The workspace's resources, each one serializer that renders it (realtime events and the REST API)
and documents it (``facilitation.api.workspace_schemas`` puts them in the OpenAPI document).

Fields are listed once, here; ``payloads`` only calls these. See ``rooms.serializers`` for ``Out``.
"""
from rest_framework import serializers

from rooms.models import Invocation, Narrative, Observation, PersonaAdaptation, Seat, TaskAssignment, Turn
from rooms.serializers import ListOf, Out, Timestamp, agent_owner


def _username(user) -> str | None:
    return user.get_username() if user is not None else None


class AuthorOut(Out):
    name = serializers.CharField(source="author_name")
    kind = serializers.ChoiceField(source="author_kind", choices=Observation.AuthorKind.choices)


class ObservationOut(Out):
    id = serializers.IntegerField()
    seq = serializers.IntegerField()
    round = serializers.IntegerField()
    type = serializers.ChoiceField(source="event_type", choices=Observation.EventType.choices)
    content = serializers.CharField()
    responding_to_id = serializers.IntegerField(allow_null=True)
    confidence = serializers.FloatField(allow_null=True, min_value=0, max_value=1)
    seat_id = serializers.IntegerField(allow_null=True)
    author = AuthorOut(source="*")
    provider = serializers.CharField(allow_blank=True)
    rehearsal = serializers.BooleanField()
    created_at = Timestamp(allow_null=True)

    @staticmethod
    def get_rehearsal(obs: Observation, context) -> bool:
        return obs.provider == "rehearsal"


class NarrativeOut(Out):
    id = serializers.IntegerField()
    round = serializers.IntegerField()
    content = serializers.CharField(allow_blank=True)
    generated_content = serializers.CharField(allow_blank=True)
    edited = serializers.BooleanField()
    key_decisions = ListOf(child=serializers.CharField())
    blockers = ListOf(child=serializers.IntegerField(), help_text="Ids of unresolved blocker observations.")
    next_steps = ListOf(child=serializers.CharField())
    version = serializers.IntegerField()
    edited_by = serializers.CharField(allow_null=True)
    edited_at = Timestamp(allow_null=True)
    provider = serializers.CharField(allow_blank=True)
    rehearsal = serializers.BooleanField()
    correlation_id = serializers.CharField(allow_blank=True)
    created_at = Timestamp(allow_null=True)

    @staticmethod
    def get_edited(narrative: Narrative, context) -> bool:
        return narrative.edited_at is not None

    @staticmethod
    def get_edited_by(narrative: Narrative, context) -> str | None:
        return _username(narrative.edited_by) if narrative.edited_by_id else None

    @staticmethod
    def get_rehearsal(narrative: Narrative, context) -> bool:
        return narrative.provider == "rehearsal"


# A workspace round (a ``Turn`` row); its narrative, when the caller has it, comes in the context.
class RoundOut(Out):
    number = serializers.IntegerField()
    started_at = Timestamp(allow_null=True)
    ended_at = Timestamp(allow_null=True)
    event_count = serializers.IntegerField()
    ended_by = serializers.CharField(allow_null=True)
    agent_states = serializers.DictField(help_text="seatId -> {name, personaId, roleId, observations, types, tasks}.")
    correlation_id = serializers.CharField(allow_blank=True)
    narrative = NarrativeOut(allow_null=True)

    @staticmethod
    def get_ended_by(turn: Turn, context) -> str | None:
        return turn.ended_by or None

    @staticmethod
    def get_agent_states(turn: Turn, context) -> dict:
        return turn.agent_states or {}

    @staticmethod
    def get_narrative(turn: Turn, context) -> Narrative | None:
        return context.get("narrative")


class TaskOut(Out):
    id = serializers.IntegerField()
    title = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    priority = serializers.IntegerField(min_value=1, max_value=5)
    status = serializers.ChoiceField(choices=TaskAssignment.Status.choices)
    assignee_id = serializers.IntegerField(allow_null=True)
    claimed_by_id = serializers.IntegerField(allow_null=True)
    version = serializers.IntegerField(help_text="Grows with every change; send it back with PATCH .../tasks/{tid}.")
    claimed_at = Timestamp(allow_null=True)
    started_at = Timestamp(allow_null=True)
    completed_at = Timestamp(allow_null=True)
    round = serializers.IntegerField()
    created_by = serializers.CharField(allow_null=True)
    created_at = Timestamp(allow_null=True)
    updated_at = Timestamp(allow_null=True)

    @staticmethod
    def get_created_by(task: TaskAssignment, context) -> str | None:
        return _username(task.created_by) if task.created_by_id else None


# A workspace participant: who sits there and the persona and role it works with now.
class WorkspaceSeatOut(Out):
    seat_id = serializers.IntegerField(source="pk")
    agent_id = serializers.IntegerField(allow_null=True)
    name = serializers.CharField(source="display_name")
    role = serializers.ChoiceField(choices=Seat.Role.choices)
    persona_id = serializers.IntegerField(source="persona_in_use_id", allow_null=True)
    role_id = serializers.IntegerField(source="role_in_use_id", allow_null=True)
    persona_override_id = serializers.IntegerField(source="persona_id", allow_null=True, help_text=(
        "The persona chosen for the seat itself; null when it works with its agent's own (`personaId`)."))
    role_override_id = serializers.IntegerField(source="work_role_id", allow_null=True, help_text=(
        "The functional role chosen for the seat itself; null when it works with its agent's own (`roleId`)."))
    version = serializers.IntegerField()
    # Who the agent is beyond its name, so that agents of one name can be told apart.
    alias = serializers.CharField(allow_blank=True, help_text="The agent's @alias (\"\" for a person's seat).")
    is_builtin = serializers.BooleanField(help_text="The agent is a built-in preset (false for a person's seat).")
    owner = serializers.CharField(allow_null=True, help_text=(
        "The username of whoever made the agent, as each participant of `GET /api/discussions/{id}` says it; null "
        "for a built-in agent, a person's seat, or an owner that is gone."))
    agent_owner = serializers.CharField(allow_null=True, help_text="The same as `owner` (its older name, kept for clients that read it).")

    @staticmethod
    def get_alias(seat: Seat, context) -> str:
        return seat.agent.alias if seat.agent_id else ""

    @staticmethod
    def get_is_builtin(seat: Seat, context) -> bool:
        return bool(seat.agent_id and seat.agent.is_builtin)

    @staticmethod
    def get_owner(seat: Seat, context) -> str | None:
        return agent_owner(seat.agent) if seat.agent_id else None

    get_agent_owner = get_owner  # ``agentOwner`` is ``owner`` under its older name


class AdaptationOut(Out):
    id = serializers.IntegerField()
    agent_id = serializers.IntegerField()
    persona_id = serializers.IntegerField(allow_null=True)
    learned_thresholds = serializers.DictField(child=serializers.FloatField())
    observation_counts = serializers.DictField(child=serializers.IntegerField())
    rounds_learned = serializers.IntegerField()
    last_round = serializers.IntegerField()
    version = serializers.IntegerField()

    @staticmethod
    def get_learned_thresholds(row: PersonaAdaptation, context) -> dict:
        return row.learned_thresholds or {}

    @staticmethod
    def get_observation_counts(row: PersonaAdaptation, context) -> dict:
        return row.observation_counts or {}


class InvocationOut(Out):
    id = serializers.IntegerField()
    component = serializers.CharField()
    correlation_id = serializers.CharField(allow_blank=True)
    agent_id = serializers.IntegerField(allow_null=True)
    user = serializers.CharField(allow_null=True)
    provider = serializers.CharField(allow_blank=True)
    model = serializers.CharField(allow_blank=True)
    input = serializers.DictField()
    output = serializers.CharField(allow_blank=True)
    success = serializers.BooleanField()
    error = serializers.CharField(allow_blank=True)
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    latency_ms = serializers.IntegerField()
    created_at = Timestamp(allow_null=True)

    @staticmethod
    def get_user(inv: Invocation, context) -> str | None:
        return _username(inv.user) if inv.user_id else None
