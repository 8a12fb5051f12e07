"""Request bodies: DRF serializers that parse the catalog's JSON and document every body.

Field names are snake_case here; the camelCase parser and the schema's camelize hook
make them ``moderatorId``, ``maxRounds``... on the wire. Discussion bodies are
validated by the room actions themselves (their errors carry field details); the
serializers below document them for the OpenAPI schema.
"""
from rest_framework import serializers

from facilitation.llm.registry import PROVIDERS
from rooms import limits
from rooms.models import Room, RoomMember, Seat

SEAT_ROLES = [Seat.Role.PARTICIPANT, Seat.Role.OBSERVER, Seat.Role.DEVIL_ADVOCATE, Seat.Role.BACKGROUND]
TARGET_STATUSES = [Room.Status.ACTIVE, Room.Status.PAUSED, Room.Status.STOPPED, Room.Status.CONCLUDED,
                   Room.Status.COMPLETED, Room.Status.ARCHIVED]
MAX_BIG = 2**62


# --- discussions (documentation; the actions validate) -------------------------------

class ParticipantIn(serializers.Serializer):
    agent_id = serializers.IntegerField(help_text="An agent you may use (built-in or your own).")
    role = serializers.ChoiceField(choices=SEAT_ROLES, default=Seat.Role.PARTICIPANT)
    persona_id = serializers.IntegerField(required=False, allow_null=True,
                                          help_text="Workspace rooms: the persona this seat starts with (default: the agent's).")


class TurnPolicyIn(serializers.Serializer):
    max_events = serializers.IntegerField(min_value=1, max_value=1000, required=False, help_text="Default 10.")
    max_seconds = serializers.IntegerField(min_value=5, max_value=86400, required=False, help_text="Default 300.")


class ConsensusIn(serializers.Serializer):
    threshold = serializers.FloatField(min_value=0, max_value=1, required=False)
    reject_blocks = serializers.BooleanField(required=False)
    human_required = serializers.BooleanField(required=False)


class DiscussionCreateIn(serializers.Serializer):
    name = serializers.CharField(max_length=limits.NAME)
    topic = serializers.CharField(max_length=limits.TOPIC)
    format = serializers.ChoiceField(choices=Room.Format.choices, required=False, help_text="Default: deliberation.")
    kind = serializers.ChoiceField(choices=Room.Kind.choices, required=False, help_text="Default: discussion.")
    moderator_id = serializers.IntegerField(help_text="The facilitator: an agent with isFacilitator.")
    max_rounds = serializers.IntegerField(min_value=1, max_value=20, required=False, allow_null=True,
                                          help_text="Default 5.")
    participants = ParticipantIn(many=True, help_text="At least one participant or devil_advocate; the facilitator cannot be one.")
    budget_tokens = serializers.IntegerField(min_value=1, max_value=MAX_BIG, required=False, allow_null=True)
    budget_usd = serializers.FloatField(min_value=0, max_value=1e6, required=False, allow_null=True)
    template = serializers.ChoiceField(choices=["feature", "code_review", "adr"], required=False,
                                       help_text="Phases with their own instructions and voting mode.")
    consensus = ConsensusIn(required=False)
    max_parallel = serializers.IntegerField(min_value=1, max_value=3, required=False,
                                            help_text="How many turns may run at once (default 1).")
    turn_policy = TurnPolicyIn(required=False, help_text="Workspace rooms: when a round ends by itself.")


class DiscussionPatchIn(serializers.Serializer):
    name = serializers.CharField(max_length=limits.NAME, required=False)
    topic = serializers.CharField(max_length=limits.TOPIC, required=False)
    format = serializers.ChoiceField(choices=Room.Format.choices, required=False, help_text="Only while draft (else 409).")
    status = serializers.ChoiceField(
        choices=TARGET_STATUSES, required=False,
        help_text="Runs the lifecycle action: active = start (from draft) or resume (from paused), paused = pause, "
                  "stopped = stop, concluded = conclude (synthesis is then scheduled; status stays active until it is "
                  "written); workspaces: completed = complete, archived = archive. A transition not allowed from "
                  "the current status is 409.")
    conclusion = serializers.CharField(max_length=limits.CONCLUSION, required=False, allow_blank=True)
    max_rounds = serializers.IntegerField(min_value=1, max_value=20, required=False)


class ModeratorIn(serializers.Serializer):
    moderator_id = serializers.IntegerField()


class MemberIn(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    access = serializers.ChoiceField(choices=RoomMember.Access.choices, default=RoomMember.Access.VIEWER)


class MemberRemoveIn(serializers.Serializer):
    username = serializers.CharField(max_length=150)


# --- catalog (parsed by these serializers, then the catalog actions) -------------------

def _texts():
    return serializers.ListField(child=serializers.CharField(max_length=300), max_length=50, required=False)


class RoleIn(serializers.Serializer):
    key = serializers.SlugField(max_length=64, required=False, help_text="Unique; derived from the name when omitted.")
    name = serializers.CharField(max_length=120)
    function = serializers.CharField(max_length=300, required=False, allow_blank=True)
    base_prompt = serializers.CharField(max_length=limits.PROMPT, required=False, allow_blank=True, trim_whitespace=False)


class PersonaIn(serializers.Serializer):
    key = serializers.SlugField(max_length=64, required=False, help_text="Unique; derived from the name when omitted.")
    name = serializers.CharField(max_length=120)
    description = serializers.CharField(max_length=500, required=False, allow_blank=True)
    style = serializers.CharField(max_length=300, required=False, allow_blank=True)
    prompt = serializers.CharField(max_length=limits.PROMPT, trim_whitespace=False,
                                   help_text="Used verbatim as the core of the system prompt.")
    is_facilitator = serializers.BooleanField(required=False)
    philosophy = serializers.CharField(max_length=500, required=False, allow_blank=True)
    best_for = serializers.ListField(child=serializers.ChoiceField(choices=Room.Format.choices), max_length=3, required=False)
    model_tier = serializers.ChoiceField(choices=["", "opus", "sonnet", "haiku"], required=False)


class AgentIn(serializers.Serializer):
    name = serializers.CharField(max_length=120)
    alias = serializers.SlugField(max_length=64, required=False, allow_blank=True, help_text="Used for @mentions.")
    description = serializers.CharField(max_length=500, required=False, allow_blank=True)
    role_id = serializers.IntegerField(required=False, allow_null=True, max_value=MAX_BIG)
    persona_id = serializers.IntegerField(required=False, allow_null=True, max_value=MAX_BIG)
    is_facilitator = serializers.BooleanField(required=False)
    provider = serializers.ChoiceField(choices=["", *PROVIDERS], required=False, help_text="Empty: the configured default.")
    model = serializers.CharField(max_length=120, required=False, allow_blank=True)
    expertise = _texts()
    concerns = _texts()
    budget_tokens = serializers.IntegerField(min_value=0, max_value=MAX_BIG, required=False, allow_null=True)
    budget_usd = serializers.DecimalField(max_digits=12, decimal_places=6, min_value=0, required=False, allow_null=True,
                                          coerce_to_string=False)

    def to_action(self) -> dict:
        data = dict(self.validated_data)
        for ref in ("role", "persona"):
            if f"{ref}_id" in data:
                data[ref] = data.pop(f"{ref}_id")
        return data

    @staticmethod
    def api_errors(details: dict) -> dict:
        """The action's error keys as this body names them (``role`` is ``roleId`` here)."""
        return {{"role": "role_id", "persona": "persona_id"}.get(k, k): v for k, v in details.items()}
