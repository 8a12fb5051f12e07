"""OpenAPI descriptions of the workspace routes' bodies and answers (``facilitation.workspace.payloads``
builds the real dicts; the schemathesis run checks that both agree)."""
from rest_framework import serializers

from facilitation.api.schemas import envelope
from rooms.models import Observation, Seat, TaskAssignment

TYPES = Observation.EventType.choices


class AuthorOut(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=Observation.AuthorKind.choices)


class ObservationOut(serializers.Serializer):
    id = serializers.IntegerField()
    seq = serializers.IntegerField()
    round = serializers.IntegerField()
    type = serializers.ChoiceField(choices=TYPES)
    content = serializers.CharField()
    responding_to_id = serializers.IntegerField(allow_null=True)
    confidence = serializers.FloatField(allow_null=True, min_value=0, max_value=1)
    seat_id = serializers.IntegerField(allow_null=True)
    author = AuthorOut()
    provider = serializers.CharField(allow_blank=True)
    rehearsal = serializers.BooleanField()
    created_at = serializers.DateTimeField(allow_null=True)


class NarrativeOut(serializers.Serializer):
    id = serializers.IntegerField()
    round = serializers.IntegerField()
    content = serializers.CharField(allow_blank=True)
    generated_content = serializers.CharField(allow_blank=True)
    edited = serializers.BooleanField()
    key_decisions = serializers.ListField(child=serializers.CharField())
    blockers = serializers.ListField(child=serializers.IntegerField(), help_text="Ids of unresolved blocker observations.")
    next_steps = serializers.ListField(child=serializers.CharField())
    version = serializers.IntegerField()
    edited_by = serializers.CharField(allow_null=True)
    edited_at = serializers.DateTimeField(allow_null=True)
    provider = serializers.CharField(allow_blank=True)
    rehearsal = serializers.BooleanField()
    correlation_id = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField(allow_null=True)


class RoundOut(serializers.Serializer):
    number = serializers.IntegerField()
    started_at = serializers.DateTimeField(allow_null=True)
    ended_at = serializers.DateTimeField(allow_null=True)
    event_count = serializers.IntegerField()
    ended_by = serializers.CharField(allow_null=True)
    agent_states = serializers.DictField(help_text="seatId -> {name, personaId, roleId, observations, types, tasks}.")
    correlation_id = serializers.CharField(allow_blank=True)
    narrative = NarrativeOut(allow_null=True)


class TaskOut(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    priority = serializers.IntegerField(min_value=1, max_value=5)
    status = serializers.ChoiceField(choices=TaskAssignment.Status.choices)
    assignee_id = serializers.IntegerField(allow_null=True)
    claimed_by_id = serializers.IntegerField(allow_null=True)
    claimed_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    completed_at = serializers.DateTimeField(allow_null=True)
    round = serializers.IntegerField()
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField(allow_null=True)


class WorkspaceSeatOut(serializers.Serializer):
    seat_id = serializers.IntegerField()
    agent_id = serializers.IntegerField(allow_null=True)
    name = serializers.CharField()
    role = serializers.ChoiceField(choices=Seat.Role.choices)
    persona_id = serializers.IntegerField(allow_null=True)
    role_id = serializers.IntegerField(allow_null=True)
    version = serializers.IntegerField()


class AdaptationOut(serializers.Serializer):
    id = serializers.IntegerField()
    agent_id = serializers.IntegerField()
    persona_id = serializers.IntegerField(allow_null=True)
    learned_thresholds = serializers.DictField(child=serializers.FloatField())
    observation_counts = serializers.DictField(child=serializers.IntegerField())
    rounds_learned = serializers.IntegerField()
    last_round = serializers.IntegerField()
    version = serializers.IntegerField()


class InvocationOut(serializers.Serializer):
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
    created_at = serializers.DateTimeField(allow_null=True)


class ScoredObservationOut(ObservationOut):
    score = serializers.FloatField()


class ScoredTaskOut(TaskOut):
    score = serializers.FloatField()


class ScoredNarrativeOut(NarrativeOut):
    score = serializers.FloatField()


class SearchOut(serializers.Serializer):
    observations = ScoredObservationOut(many=True)
    tasks = ScoredTaskOut(many=True)
    narratives = ScoredNarrativeOut(many=True)


class SearchMetaOut(serializers.Serializer):
    q = serializers.CharField()
    engine = serializers.ChoiceField(choices=["sqlite-fts5", "postgresql"])
    reranked = serializers.BooleanField(help_text="True when an embeddings endpoint re-ranked the results.")


class ListMetaOut(serializers.Serializer):
    count = serializers.IntegerField()


class ObservationsMetaOut(ListMetaOut):
    round = serializers.IntegerField(help_text="The workspace's current round.")
    status = serializers.CharField()


# --- bodies -------------------------------------------------------------------------------

class ObservationIn(serializers.Serializer):
    type = serializers.ChoiceField(choices=TYPES)
    content = serializers.CharField(max_length=10_000)
    responding_to_id = serializers.IntegerField(required=False, allow_null=True, help_text="An observation of this room.")
    confidence = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=1)


class NarrativePatchIn(serializers.Serializer):
    content = serializers.CharField(required=False, max_length=50_000)
    key_decisions = serializers.ListField(child=serializers.CharField(max_length=1000), max_length=50, required=False)
    blockers = serializers.ListField(child=serializers.IntegerField(min_value=1), max_length=50, required=False)
    next_steps = serializers.ListField(child=serializers.CharField(max_length=1000), max_length=50, required=False)
    version = serializers.IntegerField(min_value=1, help_text="The version you edited; a stale one is 409 with the current narrative.")


class TaskIn(serializers.Serializer):
    title = serializers.CharField(max_length=300)
    description = serializers.CharField(max_length=10_000, required=False, allow_blank=True)
    assignee_id = serializers.IntegerField(required=False, allow_null=True, help_text="A seatId of this room.")
    priority = serializers.IntegerField(min_value=1, max_value=5, required=False, help_text="1 (low) .. 5 (urgent); default 3.")


class TaskPatchIn(serializers.Serializer):
    title = serializers.CharField(max_length=300, required=False)
    description = serializers.CharField(max_length=10_000, required=False, allow_blank=True)
    assignee_id = serializers.IntegerField(required=False, allow_null=True)
    priority = serializers.IntegerField(min_value=1, max_value=5, required=False)


class TaskStepIn(serializers.Serializer):
    seat_id = serializers.IntegerField(required=False, allow_null=True,
                                       help_text="Claim only: the seat that claims (default: the assignee).")


class SeatPatchIn(serializers.Serializer):
    persona_id = serializers.IntegerField(required=False, allow_null=True)
    role_id = serializers.IntegerField(required=False, allow_null=True)
    version = serializers.IntegerField(min_value=1)


class AdaptationPatchIn(serializers.Serializer):
    learned_thresholds = serializers.DictField(child=serializers.FloatField(min_value=0, max_value=1))
    version = serializers.IntegerField(min_value=1)


ObservationEnvelope = envelope("ObservationEnvelope", ObservationOut())
ObservationListEnvelope = envelope("ObservationListEnvelope", ObservationOut(many=True), ObservationsMetaOut())
RoundListEnvelope = envelope("RoundListEnvelope", RoundOut(many=True), ListMetaOut())
RoundEndEnvelope = envelope("RoundEndEnvelope", RoundOut())
NarrativeEnvelope = envelope("NarrativeEnvelope", NarrativeOut())
NarrativeListEnvelope = envelope("NarrativeListEnvelope", NarrativeOut(many=True), ListMetaOut())
TaskEnvelope = envelope("TaskEnvelope", TaskOut())
TaskListEnvelope = envelope("TaskListEnvelope", TaskOut(many=True), ListMetaOut())
SeatEnvelope = envelope("WorkspaceSeatEnvelope", WorkspaceSeatOut())
AdaptationEnvelope = envelope("AdaptationEnvelope", AdaptationOut())
AdaptationListEnvelope = envelope("AdaptationListEnvelope", AdaptationOut(many=True), ListMetaOut())
InvocationListEnvelope = envelope("InvocationListEnvelope", InvocationOut(many=True), ListMetaOut())
SearchEnvelope = envelope("SearchEnvelope", SearchOut(), SearchMetaOut())
