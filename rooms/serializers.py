"""One serializer per resource: its fields are declared once, and the same class renders the wire's
JSON (REST answers and realtime events) and documents it (drf-spectacular reads these classes).

Field names are snake_case, as in the rest of the API's serializers; the rendered keys are the
wire's camelCase (``created_at`` -> ``createdAt``), so an event payload needs no renderer and the
REST renderer leaves the keys as they are. The schema's camelize hook makes the documented names
the same camelCase.

``Out`` renders fast enough for the hot path (a turn per event): each class compiles its fields
once, and ``Out.render(obj)`` walks that list without building a serializer per object. A value
that is not simply an attribute comes from a static method ``get_<field>(obj, context)``; one
that raises ``SkipField`` leaves its key out. A ``Mapping`` is read by its wire keys. A ``ListOf``
field renders a null JSON list as ``[]``.
"""
from collections.abc import Mapping
from operator import attrgetter

from djangorestframework_camel_case.util import camelize
from rest_framework import serializers
from rest_framework.fields import SkipField

from rooms.models import ChatLink, Delivery, Observation, Room, Seat

_FIELD, _NESTED, _MANY = 0, 1, 2

# What DRF's ``to_representation`` of these exact field classes comes to, without its call overhead.
_PLAIN = {serializers.IntegerField: int, serializers.CharField: str, serializers.FloatField: float,
          serializers.BooleanField: bool}


def _same(value):
    return value


def _converter(field):
    kind = type(field)
    if isinstance(field, (serializers.ListField, serializers.DictField, serializers.JSONField)):
        return _same  # JSON data (a model's JSONField, a computed list): passed on as it is; the child documents it
    if kind in _PLAIN:
        return _PLAIN[kind]
    if kind is serializers.ChoiceField and all(isinstance(v, str) for v in field.choices):
        return str  # a TextChoices member or its value: the value
    return field.to_representation


def _reader(field):
    """How the field's value is read from an object (DRF's ``get_attribute``, short-cut for one plain name)."""
    attrs = field.source_attrs
    if not attrs:  # source="*"
        return lambda obj: obj
    if len(attrs) == 1:
        return attrgetter(attrs[0])
    return field.get_attribute


def wire_name(name: str) -> str:
    """The camelCase key of a snake_case field, as the REST renderer would write it."""
    return next(iter(camelize({name: None})))


# A JSON list column that may hold null: always a list on the wire (a copy, never the model's own).
class ListOf(serializers.ListField):
    pass


def _list_of(read):
    return lambda obj, context: list(read(obj) or [])


# A datetime as ``isoformat()`` (``+00:00``, microseconds kept), the form every payload uses.
class Timestamp(serializers.DateTimeField):
    def to_representation(self, value):
        return value.isoformat() if value else None


# A read-only resource serializer (see the module's docstring). Its subclasses carry comments, not
# docstrings: drf-spectacular would publish a docstring as the component's description.
class Out(serializers.Serializer):
    @classmethod
    def _compiled(cls) -> list:
        plan = cls.__dict__.get("_plan")
        if plan is None:
            plan = []
            for name, field in cls().fields.items():
                if hasattr(serializers.Serializer, f"get_{name}"):
                    raise TypeError(f"{cls.__name__}.{name}: the name clashes with Serializer.get_{name}.")
                getter = getattr(cls, f"get_{name}", None)
                if getter is None and isinstance(field, ListOf):
                    getter = _list_of(_reader(field))
                if isinstance(field, Out):
                    kind, render = _NESTED, type(field).render
                elif isinstance(field, serializers.ListSerializer) and isinstance(field.child, Out):
                    kind, render = _MANY, type(field.child).render
                else:
                    kind, render = _FIELD, _converter(field)
                plan.append((wire_name(name), _reader(field), getter, kind, render))
            cls._plan = plan
        return plan

    @classmethod
    def render(cls, obj, **context) -> dict:
        """``obj`` as the wire's JSON object. ``context`` reaches every ``get_<field>``, nested ones too."""
        result = {}
        mapping = isinstance(obj, Mapping)
        for key, read, getter, kind, render in cls._plan if "_plan" in cls.__dict__ else cls._compiled():
            try:
                if getter is not None:
                    value = getter(obj, context)
                elif mapping:
                    value = obj[key]
                else:
                    value = read(obj)
            except SkipField:
                continue
            if value is None:
                result[key] = None
            elif kind == _FIELD:
                result[key] = render(value)
            elif kind == _NESTED:
                result[key] = render(value, **context)
            else:
                result[key] = [render(item, **context) for item in value]
        return result

    def to_representation(self, instance):
        return self.render(instance, **self.context)


def agent_owner(agent) -> str | None:
    """Whose ``agent`` is, as payloads name people (a username): None for a built-in agent, no agent, or an
    owner who is gone. Two agents of one name are told apart by it."""
    if agent is None or agent.is_builtin or not agent.created_by_id:
        return None
    return agent.created_by.get_username()


# --- rooms, turns and statuses (events, REST and exports) -------------------------------------

class StatusOut(Out):
    status = serializers.ChoiceField(choices=Room.Status.choices)
    round = serializers.IntegerField()
    max_rounds = serializers.IntegerField()


# Who spoke. ``role`` in the context saves a seat lookup when the caller knows it.
class SpeakerOut(Out):
    id = serializers.IntegerField(source="seat_id", allow_null=True, help_text="The seat id.")
    name = serializers.CharField(source="author_name")
    kind = serializers.ChoiceField(source="author_kind", choices=Observation.AuthorKind.choices)
    role = serializers.CharField()

    @staticmethod
    def get_role(obs: Observation, context) -> str:
        role = context.get("role")
        if role is not None:
            return role
        if obs.author_kind == Observation.AuthorKind.FACILITATOR:
            return Seat.Role.FACILITATOR
        seat: Seat | None = obs.seat
        if seat is not None:
            return seat.role
        # A person without a seat (a comment from the page or a chat) speaks as a participant, as the live event says.
        return Seat.Role.PARTICIPANT if obs.author_kind == Observation.AuthorKind.HUMAN else "system"


class TurnOut(Out):
    id = serializers.IntegerField()
    seq = serializers.IntegerField()
    round = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=Observation.Kind.choices)
    speaker = SpeakerOut(source="*")
    content = serializers.CharField(allow_blank=True)
    markers = serializers.ListField(child=serializers.DictField())
    status = serializers.ChoiceField(choices=Observation.Status.choices)
    provider = serializers.CharField(allow_blank=True)
    rehearsal = serializers.BooleanField()
    tokens = serializers.IntegerField()
    data = serializers.DictField(help_text="For decisions: decision, nextParticipantId, question, reasoning, fallback.")
    created_at = Timestamp(allow_null=True)

    @staticmethod
    def get_rehearsal(obs: Observation, context) -> bool:
        return obs.provider == "rehearsal"


# --- deliveries, chat links and chat identities (events and REST) ------------------------------

# The public contract names three delivery states; a message not yet sent (queued, or being
# sent right now) reads as "retrying": it will be tried until it is sent or undeliverable.
PUBLIC_STATUS = {
    Delivery.Status.QUEUED: "retrying",
    Delivery.Status.SENDING: "retrying",
    Delivery.Status.RETRYING: "retrying",
    Delivery.Status.SENT: "sent",
    Delivery.Status.UNDELIVERABLE: "undeliverable",
}


class DeliveryOut(Out):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=Delivery.Kind.choices)
    principal = serializers.CharField(allow_blank=True, help_text="user:<name>, role:<key>, chat:<id> or identity:<id>.")
    recipient = serializers.CharField(allow_blank=True)
    platform = serializers.CharField(allow_blank=True)
    status = serializers.ChoiceField(choices=["sent", "undeliverable", "retrying"],
                                     help_text="retrying: not sent yet (queued, being sent, or waiting to retry).")
    state = serializers.ChoiceField(choices=Delivery.Status.choices, source="status")
    attempts = serializers.IntegerField()
    chat_id = serializers.IntegerField(allow_null=True)
    source_seq = serializers.IntegerField(allow_null=True, help_text="The relayed turn's seq.")
    created_at = Timestamp()
    sent_at = Timestamp(allow_null=True)
    diagnostic = serializers.CharField(required=False, help_text="Why it is not (yet) delivered.")

    @staticmethod
    def get_status(d: Delivery, context) -> str:
        return PUBLIC_STATUS[d.status]

    @staticmethod
    def get_source_seq(d: Delivery, context) -> int | None:
        return d.source.seq if d.source_id and d.source is not None else None

    @staticmethod
    def get_diagnostic(d: Delivery, context) -> str:
        if not d.diagnostic:
            raise SkipField  # absent until there is something to say
        return d.diagnostic


class LinkOut(Out):
    id = serializers.IntegerField()
    chat_id = serializers.IntegerField()
    platform = serializers.CharField(source="chat.platform")
    external_id = serializers.CharField(source="chat.external_id")
    title = serializers.CharField(source="chat.title", allow_blank=True)
    kind = serializers.CharField(source="chat.kind")
    active = serializers.BooleanField()
    linked_by = serializers.CharField(allow_null=True)
    linked_at = Timestamp()
    unlinked_at = Timestamp(allow_null=True)

    @staticmethod
    def get_linked_by(link: ChatLink, context) -> str | None:
        return link.linked_by.display_name if link.linked_by_id and link.linked_by is not None else None


class IdentityOut(Out):
    id = serializers.IntegerField()
    platform = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    username = serializers.CharField(allow_blank=True)
    started_bot = serializers.BooleanField()
