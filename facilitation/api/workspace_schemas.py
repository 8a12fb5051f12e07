"""OpenAPI descriptions of the workspace routes' bodies and answers.

The resources themselves are ``facilitation.workspace.serializers`` (one serializer each, which
renders them too); this module adds what only the REST answers carry (search scores, list metas)
and the request bodies.
"""
from rest_framework import serializers

from facilitation.api.schemas import CountedPageMetaOut, envelope
from facilitation.workspace.serializers import (
    AdaptationOut, InvocationOut, NarrativeOut, ObservationOut, RoundOut, TaskOut, WorkspaceSeatOut,
)
from rooms.models import Observation

TYPES = Observation.EventType.choices


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
    hasMore = serializers.BooleanField(help_text="More observations match than these: later ones (ask again with "
                                                 "afterSeq = the last seq), or with latest=true older ones (beforeSeq = "
                                                 "the first seq).")


# --- bodies -------------------------------------------------------------------------------

class ObservationIn(serializers.Serializer):
    type = serializers.ChoiceField(choices=TYPES)
    content = serializers.CharField(max_length=10_000)
    responding_to_id = serializers.IntegerField(required=False, allow_null=True, min_value=1, help_text="An observation of this room.")
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
    assignee_id = serializers.IntegerField(required=False, allow_null=True, min_value=1, help_text="A seatId of this room.")
    priority = serializers.IntegerField(min_value=1, max_value=5, required=False, help_text="1 (low) .. 5 (urgent); default 3.")


class TaskPatchIn(serializers.Serializer):
    title = serializers.CharField(max_length=300, required=False)
    description = serializers.CharField(max_length=10_000, required=False, allow_blank=True)
    assignee_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    priority = serializers.IntegerField(min_value=1, max_value=5, required=False)
    version = serializers.IntegerField(min_value=1, required=False,
                                       help_text="The version you edited; a stale one is 409 with the current task. "
                                                 "Left out: the edit applies to the task as it is.")


class TaskStepIn(serializers.Serializer):
    seat_id = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                       help_text="Claim only: the seat that claims (default: the assignee).")


class SeatPatchIn(serializers.Serializer):
    persona_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    role_id = serializers.IntegerField(required=False, allow_null=True, min_value=1)
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
InvocationListEnvelope = envelope("InvocationListEnvelope", InvocationOut(many=True), CountedPageMetaOut())
SearchEnvelope = envelope("SearchEnvelope", SearchOut(), SearchMetaOut())
