"""The body that creates a discussion (and the one that changes its facilitator), parsed once for
every caller: the REST API, the command line (``discussions new``, ``run_discussion``, ``demo``)
and discussion files.

``DiscussionCreateIn.parse(body)`` checks every type, range, choice and length and returns the
typed keyword arguments of ``rooms.actions.rooms.do_create_room``, or raises ``ValidationFailed``
(400) with one message and the offending fields as details (camelCase paths such as
``participants[1].agentId``). What needs the database (which agents and personas the owner may
use, the facilitator, a seat taken twice, at least one speaker) stays with the action.

Field names are snake_case; the API's camelCase parser and the schema's camelize hook make them
``moderatorId``, ``maxRounds``... on the wire. ``facilitation.api.inputs`` documents these classes.
"""
from decimal import Decimal, InvalidOperation

from django.conf import settings
from rest_framework import serializers
from rest_framework.fields import empty

from facilitation.deliberation.consensus import ConsensusRules, RulesError
from facilitation.deliberation.names import name_problem, same_name
from facilitation.deliberation.templates import TEMPLATES, get_template
from rooms import limits
from rooms.actions.rooms import CLEAR
from rooms.errors import ValidationFailed
from rooms.models import Room, Seat
from rooms.serializers import wire_name

ROOM_KINDS = [Room.Kind.DISCUSSION, Room.Kind.WORKSPACE]  # what DiscussionCreateIn creates
SEAT_ROLES = [Seat.Role.PARTICIPANT, Seat.Role.OBSERVER, Seat.Role.DEVIL_ADVOCATE, Seat.Role.BACKGROUND]
MAX_BIG = 2**62
MAX_PARALLEL = 3
POLICY_LIMITS = {"max_events": (1, 1000), "max_seconds": (5, 86_400)}


def _messages(text: str, **others) -> dict:
    """One message for every way a field can be wrong, except those named."""
    keys = ("required", "null", "invalid", "blank", "invalid_choice", "max_length", "min_value", "max_value",
            "max_string_length", "not_a_list", "empty", "not_a_dict")
    return {**dict.fromkeys(keys, text), **others}


#: The code of an error that says a value has the wrong JSON type; its message is the field class's own
#: ("Must be a whole number.", "Must be text.", "Must be true or false."), never a field's other messages.
TYPE_ERROR = "invalid_type"


class WholeNumber(serializers.IntegerField):
    """An integer as JSON has it: ``"5"``, ``5.0`` and ``true`` are refused as not a whole number."""

    default_error_messages = {TYPE_ERROR: "Must be a whole number."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail(TYPE_ERROR)
        return super().to_internal_value(data)


class _JsonString:
    """A field that takes only a JSON string (a number or a list is refused, not turned into text)."""

    default_error_messages = {TYPE_ERROR: "Must be text."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail(TYPE_ERROR)
        return super().to_internal_value(data)


class Text(_JsonString, serializers.CharField):
    """A JSON string."""


class Name(Text):
    """A JSON string naming something people see in lists, headings and chats: one line, nothing invisible in it
    (``facilitation.deliberation.names``), and more than joiners."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value and not same_name(value):
            self.fail("blank")
        problem = name_problem(value)
        if problem:
            raise serializers.ValidationError(problem)
        return value


class Slug(_JsonString, serializers.SlugField):
    """A slug sent as a JSON string (``5`` is refused, not read as ``"5"``)."""


class Flag(serializers.BooleanField):
    """JSON ``true`` or ``false`` only (``"yes"``, ``1`` and ``"true"`` are refused)."""

    default_error_messages = {TYPE_ERROR: "Must be true or false."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail(TYPE_ERROR)
        return data


def is_type_error(errors) -> bool:
    return isinstance(errors, list) and bool(errors) and getattr(errors[0], "code", None) == TYPE_ERROR


def type_headline(errors: dict) -> str | None:
    """``"name must be text."`` for the first field of ``errors`` sent with the wrong type, else None."""
    for key, value in errors.items():
        if is_type_error(value):
            message = str(value[0])
            return f"{wire_name(key)} {message[:1].lower()}{message[1:]}"
    return None


#: The largest room budget in USD: ``Room.budget_usd`` holds 12 digits, 6 of them after the point.
MAX_USD = Decimal("999999.99")


class Money(serializers.FloatField):
    """A finite amount, kept exact to the micro-unit (a ``Decimal``)."""

    def to_internal_value(self, data):
        try:
            if isinstance(data, bool) or not isinstance(data, (int, float, str)):
                raise InvalidOperation
            amount = Decimal(str(data))
            if not amount.is_finite():
                raise InvalidOperation
        except InvalidOperation:
            self.fail("invalid")
        try:
            return amount.quantize(Decimal("0.000001"))
        except InvalidOperation:
            # Too many digits to keep to the micro-unit (1e308, "1e999"): far out of any range, so the
            # field's bounds refuse it with their own message.
            return amount


# --- the parts of the body ----------------------------------------------------------------------

class NullIsDefault(serializers.Serializer):
    """A body whose fields named in ``NONE_IS_ABSENT`` take a value of ``ABSENT`` (``null``, or "") as "not sent":
    the default applies. The schema says they may be null."""

    NONE_IS_ABSENT: tuple = ()
    ABSENT: tuple = (None, "")

    def get_fields(self):
        fields = super().get_fields()
        for name in self.NONE_IS_ABSENT:
            fields[name].allow_null = True
        return fields

    def to_internal_value(self, data):
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if not (k in self.NONE_IS_ABSENT and v in self.ABSENT)}
        return super().to_internal_value(data)


class ParticipantIn(NullIsDefault):
    agent_id = WholeNumber(help_text="An agent you may use (built-in or your own).",
                           error_messages=_messages("Unknown agent {value}.", required="Unknown agent None.",
                                                    null="Unknown agent None."))
    role = serializers.ChoiceField(choices=SEAT_ROLES, default=Seat.Role.PARTICIPANT,
                                   help_text="Left out or null: participant.",
                                   error_messages=_messages(f"Role must be one of {', '.join(sorted(SEAT_ROLES))}."))
    persona_id = WholeNumber(required=False, allow_null=True,
                             help_text="Workspace rooms: the persona this seat starts with; left out or null: the agent's.",
                             error_messages=_messages("Unknown persona {value}."))
    role_id = WholeNumber(required=False, allow_null=True,
                          help_text="Workspace rooms: the functional role this seat starts with (a working one); left out "
                                    "or null: the agent's.",
                          error_messages=_messages("Unknown role {value}."))

    default_error_messages = {"invalid": "Each participant is an object with an agent id and a role."}
    NONE_IS_ABSENT = ("role",)
    ABSENT = (None,)  # an empty role is a wrong one


class TurnPolicyIn(serializers.Serializer):
    max_events = WholeNumber(min_value=1, max_value=1000, required=False, help_text="Default 10.",
                             error_messages=_messages("Must be a whole number from 1 to 1000."))
    max_seconds = WholeNumber(min_value=5, max_value=86400, required=False, help_text="Default 300.",
                              error_messages=_messages("Must be a whole number from 5 to 86400."))

    default_error_messages = {"invalid": "Send {{maxEvents, maxSeconds}}."}

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        unknown = sorted(k for k in data if k not in self.fields)
        if unknown:
            raise serializers.ValidationError({k: ["Unknown setting; use maxEvents and maxSeconds."] for k in unknown})
        # Stored as the room's turn policy, which the engine reads with the wire's names.
        return {wire_name(k): v for k, v in value.items()}


# Parsed by ``ConsensusRules.parse`` (the rules' own checks and messages); gives the rules.
# (Comments, not docstrings, on the serializers in the schema: drf-spectacular would publish them.)
class ConsensusIn(serializers.Serializer):

    threshold = serializers.FloatField(min_value=0, max_value=1, required=False)
    reject_blocks = serializers.BooleanField(required=False)
    human_required = serializers.BooleanField(required=False)

    def run_validation(self, data=empty):
        try:
            return ConsensusRules.parse(None if data is empty else data)
        except RulesError as exc:
            raise serializers.ValidationError([str(exc)], code="invalid") from None


def _deliberation_fields() -> tuple:
    """``template, consensus, max_parallel``: the same three fields in both bodies that take them."""
    return (
        serializers.ChoiceField(
            choices=["feature", "code_review", "adr"], required=False,
            help_text="Phases with their own instructions and voting mode; left out or null: none.",
            error_messages=_messages(f"Unknown template; choose one of {', '.join(sorted(TEMPLATES))}.")),
        ConsensusIn(required=False, help_text="The consensus rules; left out or null: the defaults (threshold 0.67, "
                                              "rejectBlocks true, humanRequired false)."),
        WholeNumber(min_value=1, max_value=MAX_PARALLEL, required=False,
                    help_text="How many turns may run at once; left out or null: 1.",
                    error_messages=_messages(f"Must be a whole number from 1 to {MAX_PARALLEL}.")),
    )


# --- parsing -----------------------------------------------------------------------------------

def flat_errors(errors: dict) -> dict:
    """DRF's nested errors with one key per field, as the wire names it: ``{"participants[1].agentId": [...]}``
    for an item's field, ``{"expertise[2]": [...]}`` for a list's item. The messages keep their codes."""
    out: dict = {}
    _flatten(errors, "", out)
    return out


def _flatten(errors, path: str, out: dict) -> None:
    if isinstance(errors, dict):
        for key, value in errors.items():
            if key == "non_field_errors":
                _flatten(value, path, out)
            elif isinstance(key, int):  # a list's items (DRF keys them by index)
                _flatten(value, f"{path}[{key}]", out)
            else:
                _flatten(value, f"{path}.{wire_name(key)}" if path else wire_name(key), out)
    elif errors and all(isinstance(e, str) for e in errors):
        out.setdefault(path, []).extend(errors)
    else:
        for i, item in enumerate(errors):
            if item:
                _flatten(item, f"{path}[{i}]", out)


# A body parsed by ``validated``. ``HEADLINES`` maps each field, in the order they are reported,
# to the error's message (or to a function of the field's errors that returns it).
class Parsed(NullIsDefault):

    HEADLINES: dict = {}

    @classmethod
    def validated(cls, body: dict) -> dict:
        parser = cls(data=body)
        if parser.is_valid():
            return parser.validated_data
        errors = parser.errors
        field = next(f for f in [*cls.HEADLINES, None] if f is None or f in errors)
        headline = cls.HEADLINES.get(field, "The request is not valid.")
        if callable(headline):
            headline = headline(errors[field])
        elif field is not None and is_type_error(errors[field]):
            headline = type_headline({field: errors[field]})  # "moderatorId must be a whole number."
        raise ValidationFailed(headline, flat_errors(errors))


def _deliberation(values: dict) -> dict:
    """The room's fields for a template, consensus rules and parallel turns."""
    settings_ = {"consensus": values.get("consensus", ConsensusRules()).dump()}
    if values.get("template"):
        settings_["template"] = values["template"]
        settings_["phase"] = get_template(values["template"]).phases[0].key
    if values.get("max_parallel") is not None:
        settings_["max_parallel"] = values["max_parallel"]
    return settings_


DELIBERATION_HEADLINES = dict.fromkeys(("template", "consensus", "max_parallel"), "The deliberation settings are not valid.")


# Template, consensus rules and parallel turns alone (``phases.deliberation_settings``).
class DeliberationIn(Parsed):

    HEADLINES = DELIBERATION_HEADLINES
    NONE_IS_ABSENT = ("template", "consensus", "max_parallel")
    template, consensus, max_parallel = _deliberation_fields()

    @classmethod
    def parse(cls, body: dict) -> dict:
        return _deliberation(cls.validated(body))


def _rounds_headline(errors) -> str:
    return "maxRounds must be a whole number." if errors[0].code in ("invalid", TYPE_ERROR) else "maxRounds is out of range."


def _participants_headline(errors) -> str:
    items = errors.values() if isinstance(errors, dict) else errors
    return "Some participants are not valid." if any(isinstance(e, dict) for e in items) else "At least one participant is required."


def _policy_headline(errors) -> str:
    return "turnPolicy is not valid." if isinstance(errors, dict) and set(errors) - {"non_field_errors"} else "turnPolicy must be an object."


class DiscussionCreateIn(Parsed):
    name = Name(max_length=limits.NAME, error_messages=_messages("A name is required.", max_length=f"At most {limits.NAME} characters."))
    topic = Text(max_length=limits.TOPIC, error_messages=_messages("A topic is required.", max_length=f"At most {limits.TOPIC} characters."))
    format = serializers.ChoiceField(choices=Room.Format.choices, required=False, help_text="Left out or null: deliberation.",
                                     error_messages=_messages(f"Must be one of {', '.join(Room.Format.values)}."))
    # A facilitation run (kind facilitation) has a body of its own (``facilitation.goals.creation``).
    kind = serializers.ChoiceField(choices=ROOM_KINDS, required=False, help_text="Left out or null: discussion.",
                                   error_messages=_messages(f"Must be one of {', '.join(Room.Kind.values)}."))
    moderator_id = WholeNumber(help_text="The facilitator: an agent with isFacilitator.",
                               error_messages=_messages("Choose a facilitator agent."))
    max_rounds = WholeNumber(min_value=1, max_value=20, required=False, allow_null=True, help_text="Left out or null: 5.",
                             error_messages=_messages("Must be an integer from 1 to 20.", min_value="Must be from 1 to 20.",
                                                      max_value="Must be from 1 to 20."))
    participants = ParticipantIn(many=True, allow_empty=False,
                                 help_text="At least one participant or devil_advocate; the facilitator cannot be one.",
                                 error_messages=dict.fromkeys(("required", "null", "not_a_list", "empty"),
                                                              "Add at least one participant."))
    budget_tokens = WholeNumber(min_value=1, max_value=MAX_BIG, required=False, allow_null=True,
                                help_text="The room's token budget; left out or null: none.",
                                error_messages=_messages("Must be a positive whole number."))
    budget_usd = Money(min_value=0, max_value=MAX_USD, required=False, allow_null=True,
                       help_text="The room's budget in USD; left out or null: none.",
                       error_messages=_messages(f"Must be a number from 0 to {MAX_USD:,}."))
    template, consensus, max_parallel = _deliberation_fields()
    turn_policy = TurnPolicyIn(required=False, help_text="Workspace rooms: when a round ends by itself; left out or "
                                                         "null: the defaults.")

    # Reported in this order: the first field wrong names the error.
    HEADLINES = {
        "budget_tokens": "The budget is not valid.", "budget_usd": "The budget is not valid.",
        **DELIBERATION_HEADLINES,
        "name": "The discussion is not valid.", "topic": "The discussion is not valid.",
        "format": "Unknown format.", "kind": "Unknown kind.",
        "max_rounds": _rounds_headline,
        "turn_policy": _policy_headline,
        "moderator_id": "moderatorId is required.",
        "participants": _participants_headline,
    }
    NONE_IS_ABSENT = ("format", "kind", "budget_tokens", "budget_usd", "template", "consensus", "max_parallel",
                      "turn_policy")

    def validate_max_rounds(self, value):
        limit = settings.CONVENE["MAX_ROUNDS_LIMIT"]
        if value is not None and value > limit:
            raise serializers.ValidationError(f"Must be from 1 to {limit}.", code="max_value")
        return value

    @classmethod
    def parse(cls, body: dict) -> dict:
        """The keyword arguments of ``do_create_room`` (after its owner), or ``ValidationFailed``."""
        values = dict(cls.validated(body))
        values["deliberation"] = _deliberation(values)
        for key in ("template", "consensus", "max_parallel"):
            values.pop(key, None)
        return values


class ModeratorIn(Parsed):
    moderator_id = WholeNumber(error_messages=_messages("Choose a facilitator agent."))

    HEADLINES = {"moderator_id": "moderatorId is required."}

    @classmethod
    def parse(cls, body: dict) -> int:
        return cls.validated(body)["moderator_id"]


# The statuses a PATCH may ask for (the lifecycle action that reaches one runs; any other known
# status is parsed and then refused by the lifecycle as a transition it does not have).
TARGET_STATUSES = [Room.Status.ACTIVE, Room.Status.PAUSED, Room.Status.STOPPED, Room.Status.CONCLUDED,
                   Room.Status.COMPLETED, Room.Status.ARCHIVED]
PATCH_UNKNOWN = "Unknown or read-only field (the facilitator changes via PATCH .../moderator)."


def _conclusion_headline(errors) -> str:
    return "The conclusion must be text." if errors[0].code in ("invalid", TYPE_ERROR) else "The update is not valid."


class DiscussionPatchIn(Parsed):
    """A change of a room: only the fields sent change. A field sent as null stays as it is, but for the budgets,
    which null removes."""

    CLEARABLE = ("budget_tokens", "budget_usd")
    name = Name(max_length=limits.NAME, required=False,
                error_messages=_messages(f"A name of 1 to {limits.NAME} characters is required."))
    topic = Text(max_length=limits.TOPIC, required=False,
                 error_messages=_messages("A topic is required.", max_length=f"At most {limits.TOPIC} characters."))
    format = serializers.ChoiceField(choices=Room.Format.choices, required=False, help_text="Only while draft (else 409).",
                                     error_messages=_messages(f"Must be one of {', '.join(Room.Format.values)}."))
    status = serializers.ChoiceField(
        choices=Room.Status.choices, required=False,
        help_text="Runs the lifecycle action: active = start (from draft) or resume (from paused), paused = pause, "
                  "stopped = stop, concluded = conclude (synthesis is then scheduled; status stays active until it is "
                  "written); workspaces: completed = complete, archived = archive. A transition not allowed from "
                  "the current status is 409.",
        error_messages=_messages(f"Must be one of {', '.join(TARGET_STATUSES)}."))
    conclusion = Text(max_length=limits.CONCLUSION, required=False, allow_blank=True, trim_whitespace=False,
                      error_messages=_messages("Must be a string.", max_length=f"Text of at most {limits.CONCLUSION} characters."))
    max_rounds = WholeNumber(min_value=1, max_value=20, required=False,
                             error_messages=_messages("Must be an integer from 1 to 20.", min_value="Must be from 1 to 20.",
                                                      max_value="Must be from 1 to 20."))
    turn_policy = TurnPolicyIn(required=False, help_text="Workspace rooms: when a round ends by itself; the settings "
                                                         "not sent stay. Applies to the open round at once.")
    budget_tokens = WholeNumber(min_value=1, max_value=MAX_BIG, required=False, allow_null=True,
                                help_text="A new token budget for the room (its next calls are checked against it); "
                                          "null: no token budget any more.",
                                error_messages=_messages("Must be a positive whole number."))
    budget_usd = Money(min_value=0, max_value=MAX_USD, required=False, allow_null=True,
                       help_text="A new budget in USD for the room; null: no USD budget any more.",
                       error_messages=_messages(f"Must be a number from 0 to {MAX_USD:,}."))

    HEADLINES = {
        "budget_tokens": "The budget is not valid.", "budget_usd": "The budget is not valid.",
        "status": "Unknown status.", "conclusion": _conclusion_headline,
        "name": "The update is not valid.", "topic": "The update is not valid.",
        "format": "Unknown format.", "max_rounds": _rounds_headline, "turn_policy": _policy_headline,
    }

    def get_fields(self):
        # Every field may be sent as null (``to_internal_value``): the schema says so, as it does for the create body's.
        fields = super().get_fields()
        for field in fields.values():
            field.allow_null = True
        return fields

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(k for k in data if k not in self.fields)
            if unknown:
                raise ValidationFailed("Some fields cannot be changed here.", {wire_name(k): [PATCH_UNKNOWN] for k in unknown})
            # null: leave the field as it is, but for a budget, which null removes (absent: unchanged)
            cleared = [k for k in self.CLEARABLE if k in data and data[k] is None]
            data = {k: v for k, v in data.items() if v is not None}
            return {**super().to_internal_value(data), **{k: CLEAR for k in cleared}}
        return super().to_internal_value(data)

    def validate_max_rounds(self, value):
        limit = settings.CONVENE["MAX_ROUNDS_LIMIT"]
        if value > limit:
            raise serializers.ValidationError(f"Must be from 1 to {limit}.", code="max_value")
        return value

    @classmethod
    def parse(cls, body: dict) -> tuple[dict, str | None]:
        """``(changes, status, turn_policy)``: the keyword arguments of ``do_update_room``, the status asked
        for and a workspace's new turn policy (each None when not sent)."""
        values = dict(cls.validated(body))
        return values, values.pop("status", None), values.pop("turn_policy", None)
