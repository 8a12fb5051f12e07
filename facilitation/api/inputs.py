"""Request bodies: DRF serializers that parse the catalog's JSON and document every body.

Field names are snake_case here; the camelCase parser and the schema's camelize hook
make them ``moderatorId``, ``maxRounds``... on the wire. The body that creates a
discussion (``DiscussionCreateIn``) and the one that changes it (``DiscussionPatchIn``) live in
``facilitation.actions.inputs``, which every caller (REST, command line, discussion files)
parses with.
"""
from rest_framework import serializers

from facilitation.actions.inputs import (MAX_BIG, ConsensusIn, DiscussionCreateIn, DiscussionPatchIn, ModeratorIn, ParticipantIn,
                                         TurnPolicyIn)
from facilitation.llm.registry import PROVIDERS
from rooms import limits
from rooms.models import Room, RoomMember

__all__ = ["ConsensusIn", "DiscussionCreateIn", "DiscussionPatchIn", "MAX_BIG", "ModeratorIn", "ParticipantIn", "TurnPolicyIn"]

# --- discussions ------------------------------------------------------------------------
# The bodies that create and change a discussion are parsed by the same serializers for the API,
# the command line and discussion files: ``facilitation.actions.inputs`` (documented here through this import).

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
