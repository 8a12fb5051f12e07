"""Request bodies: DRF serializers that parse the catalog's JSON and document every body.

Field names are snake_case here; the camelCase parser and the schema's camelize hook
make them ``moderatorId``, ``maxRounds``... on the wire. The body that creates a
discussion (``DiscussionCreateIn``) and the one that changes it (``DiscussionPatchIn``) live in
``facilitation.actions.inputs``, which every caller (REST, command line, discussion files)
parses with.
"""
from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.utils import PolymorphicProxySerializer
from rest_framework import serializers

from facilitation.actions.inputs import (MAX_BIG, ConsensusIn, DiscussionCreateIn, DiscussionPatchIn, Flag, ModeratorIn, Name,
                                         ParticipantIn, Slug, Text, TurnPolicyIn, WholeNumber)
from facilitation.api.openapi import NON_SPACE
from facilitation.goals.patterns import MAX_ITEMS, MAX_NAME, MAX_OPTIONS, MAX_ROLES, PATTERNS
from facilitation.llm.registry import PROVIDERS
from rooms import limits
from rooms.models import FacilitationRun, Room, RoomMember

__all__ = ["ConsensusIn", "DiscussionCreateIn", "DiscussionPatchIn", "MAX_BIG", "ModeratorIn", "ParticipantIn", "TurnPolicyIn"]

# --- discussions ------------------------------------------------------------------------
# The bodies that create and change a discussion are parsed by the same serializers for the API,
# the command line and discussion files: ``facilitation.actions.inputs`` (documented here through this import).


# The slots of a facilitation run's pattern (``facilitation.goals.patterns.validate`` parses them).
class FacilitationSlotsIn(serializers.Serializer):
    roles = serializers.ListField(child=serializers.CharField(max_length=MAX_NAME), min_length=1, max_length=MAX_ROLES,
                                  required=False, help_text="role_assignment: the roles to fill (required there).")
    options = serializers.ListField(child=serializers.CharField(max_length=MAX_NAME), max_length=MAX_OPTIONS, required=False,
                                    help_text="decision: the options to choose from (two or more), or none to let the "
                                              "group propose them.")
    min = serializers.IntegerField(min_value=1, max_value=MAX_ITEMS, required=False, help_text="list: how many items (default 1).")


# The body of ``POST /api/discussions`` with ``kind: "facilitation"``: parsed by
# ``facilitation.goals.creation.do_create_run`` (this serializer documents it; it parses nothing).
class FacilitationRunCreateIn(serializers.Serializer):
    name = Name(max_length=limits.NAME)
    topic = serializers.CharField(max_length=limits.TOPIC, help_text="The goal.")
    kind = serializers.ChoiceField(choices=[Room.Kind.FACILITATION], help_text="facilitation: a facilitation run.")
    pattern = serializers.ChoiceField(choices=list(PATTERNS), help_text=(
        "role_assignment (slots {roles}: done when every role holds one person and the group confirmed), "
        "decision (slots {options?}) or list (slots {min?})."))
    slots = FacilitationSlotsIn(required=False, help_text="What the pattern needs; see pattern.")
    report_to = serializers.ListField(
        child=serializers.RegexField(r"^(user|role):\S+$", max_length=limits.USERNAME + 5), max_length=20, required=False,
        help_text='Who gets the result: "user:<username>" or "role:<key>" (an auth group), resolved when sending.')
    deadline = serializers.DateTimeField(help_text="ISO 8601, in the future and within ttlHours; without an offset it is UTC.")
    reminder_minutes = serializers.IntegerField(min_value=5, max_value=7 * 24 * 60, required=False, allow_null=True,
                                                help_text="Remind the group after this many quiet minutes (default: never).")
    ttl_hours = serializers.IntegerField(min_value=1, max_value=settings.CONVENE["FACILITATION_MAX_TTL_HOURS"], required=False,
                                         help_text=(
                                             f"The run expires after this many hours (default "
                                             f"{settings.CONVENE['FACILITATION_DEFAULT_TTL_HOURS']}; at most "
                                             "FACILITATION_MAX_TTL_HOURS)."))
    mode = serializers.ChoiceField(choices=FacilitationRun.Mode.choices, required=False, help_text="Default: facilitate.")
    confirm_mode = serializers.ChoiceField(choices=["named", "initiator"], required=False, help_text="Default: named.")
    disclose_report_to = serializers.BooleanField(required=False, help_text="Say in the group who gets the result (default true).")
    interim_reports = serializers.BooleanField(required=False, help_text="Default false.")
    moderator_id = serializers.IntegerField(required=False, allow_null=True, max_value=MAX_BIG,
                                            help_text="The facilitator agent (default: the first one you may use).")


#: The body of ``POST /api/discussions``: a discussion or workspace, or (``kind: "facilitation"``) a facilitation run.
DiscussionCreateRequest = PolymorphicProxySerializer(
    component_name="DiscussionCreate", serializers=[DiscussionCreateIn, FacilitationRunCreateIn],
    resource_type_field_name=None)

class MemberIn(serializers.Serializer):
    username = Text(max_length=150)
    access = serializers.ChoiceField(choices=RoomMember.Access.choices, default=RoomMember.Access.VIEWER)


class MemberRemoveIn(serializers.Serializer):
    username = Text(max_length=150)


# --- catalog (parsed by these serializers, then the catalog actions) -------------------
# Text, Slug, WholeNumber and Flag refuse a value of the wrong JSON type ("must be text", "must be a whole
# number", "must be true or false") instead of converting it (5 to "5", "yes" to true).

def _texts():
    return serializers.ListField(child=Text(max_length=300), max_length=50, required=False)


class RoleIn(serializers.Serializer):
    key = Slug(max_length=64, required=False, help_text="Unique; derived from the name when omitted.")
    name = Name(max_length=120)
    function = Text(max_length=300, required=False, allow_blank=True)
    base_prompt = Text(max_length=limits.PROMPT, required=False, allow_blank=True, trim_whitespace=False)


class PersonaIn(serializers.Serializer):
    key = Slug(max_length=64, required=False, help_text="Unique; derived from the name when omitted.")
    name = Name(max_length=120)
    description = Text(max_length=500, required=False, allow_blank=True)
    style = Text(max_length=300, required=False, allow_blank=True)
    prompt = Text(max_length=limits.PROMPT, trim_whitespace=False,
                  validators=[RegexValidator(NON_SPACE, "The prompt needs more than spaces.")],
                  help_text="Used verbatim as the core of the system prompt.")
    is_facilitator = Flag(required=False)
    philosophy = Text(max_length=500, required=False, allow_blank=True)
    best_for = serializers.ListField(child=serializers.ChoiceField(choices=Room.Format.choices), max_length=3, required=False)
    model_tier = serializers.ChoiceField(choices=["", "opus", "sonnet", "haiku"], required=False)


class AgentIn(serializers.Serializer):
    name = Name(max_length=120)
    alias = Slug(max_length=64, required=False, allow_blank=True, help_text=(
        "Used for @mentions and `GET /api/agents?alias=`; unique among your agents and the built-ins, compared "
        "without case. Left out when creating, or sent empty (create or PATCH): derived from the name, numbered "
        "when taken (`architect-2`); `agent` (`agent-2` ...) for a name with no Latin letters or digits."))
    description = Text(max_length=500, required=False, allow_blank=True)
    role_id = WholeNumber(required=False, allow_null=True, max_value=MAX_BIG)
    persona_id = WholeNumber(required=False, allow_null=True, max_value=MAX_BIG)
    is_facilitator = Flag(required=False)
    provider = serializers.ChoiceField(choices=["", *PROVIDERS], required=False, help_text="Empty: the configured default.")
    model = Text(max_length=120, required=False, allow_blank=True)
    expertise = _texts()
    concerns = _texts()
    budget_tokens = WholeNumber(min_value=0, max_value=MAX_BIG, required=False, allow_null=True)
    budget_usd = serializers.DecimalField(max_digits=12, decimal_places=6, min_value=0, required=False, allow_null=True,
                                          coerce_to_string=False,
                                          help_text="US dollars, kept exact: at most 6 decimal places, from 0 to below "
                                                    "1,000,000 (999999.999999 at most); null: no budget.")

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
