"""Creating, changing, sharing and deleting rooms."""
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from rooms import realtime
from rooms.errors import StateConflict, ValidationFailed
from rooms.events import record_event
from rooms.models import Agent, Room, RoomMember, Seat
from rooms.queries import usable_agents

SEAT_ROLES = {Seat.Role.PARTICIPANT, Seat.Role.OBSERVER, Seat.Role.DEVIL_ADVOCATE}


def _max_rounds(value) -> int:
    limits = settings.CONVENE
    if value is None or value == "":
        return limits["DEFAULT_MAX_ROUNDS"]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationFailed("maxRounds must be a whole number.", {"maxRounds": ["Must be an integer from 1 to 20."]})
    if not 1 <= value <= limits["MAX_ROUNDS_LIMIT"]:
        raise ValidationFailed("maxRounds is out of range.", {"maxRounds": [f"Must be from 1 to {limits['MAX_ROUNDS_LIMIT']}."]})
    return value


def _validate_participants(user, moderator: Agent | None, participants) -> list[tuple[Agent, str]]:
    errors: dict[str, list[str]] = {}
    if not isinstance(participants, list) or not participants:
        raise ValidationFailed("At least one participant is required.", {"participants": ["Add at least one participant."]})
    agents = {a.pk: a for a in usable_agents(user)}
    seen: set[int] = set()
    result: list[tuple[Agent, str]] = []
    for i, p in enumerate(participants):
        key = f"participants[{i}]"
        if not isinstance(p, dict):
            errors[key] = ["Each participant is an object {agentId, role}."]
            continue
        agent_id, role = p.get("agentId", p.get("agent_id")), p.get("role", Seat.Role.PARTICIPANT)
        agent = agents.get(agent_id) if isinstance(agent_id, int) and not isinstance(agent_id, bool) else None
        if agent is None:
            errors[f"{key}.agentId"] = [f"Unknown agent {agent_id!r}."]
            continue
        if role not in SEAT_ROLES:
            errors[f"{key}.role"] = [f"Role must be one of {', '.join(sorted(SEAT_ROLES))}."]
            continue
        if moderator is not None and agent.pk == moderator.pk:
            errors[f"{key}.agentId"] = ["The facilitator cannot also be a participant."]
            continue
        if agent.pk in seen:
            errors[f"{key}.agentId"] = ["This agent is already seated."]
            continue
        seen.add(agent.pk)
        result.append((agent, role))
    if errors:
        raise ValidationFailed("Some participants are not valid.", errors)
    if not any(role in Seat.SPEAKING for _, role in result):
        raise ValidationFailed("At least one speaking participant is required.", {"participants": ["Add a participant or a devil's advocate; observers do not speak."]})
    return result


def _moderator(user, moderator_id) -> Agent:
    if isinstance(moderator_id, bool) or not isinstance(moderator_id, int):
        raise ValidationFailed("moderatorId is required.", {"moderatorId": ["Choose a facilitator agent."]})
    agent = usable_agents(user).filter(pk=moderator_id).first()
    if agent is None:
        raise ValidationFailed("Unknown facilitator.", {"moderatorId": [f"Unknown agent {moderator_id!r}."]})
    if not agent.is_facilitator:
        raise ValidationFailed("That agent is not a facilitator.", {"moderatorId": ["The moderator must be an agent with isFacilitator."]})
    return agent


def _choice(value, choices, field: str, default=None):
    if value is None and default is not None:
        return default
    if value not in choices.values:
        raise ValidationFailed(f"Unknown {field}.", {field: [f"Must be one of {', '.join(choices.values)}."]})
    return value


def do_create_room(owner, *, name: str, topic: str, format=None, kind=None, moderator_id=None, max_rounds=None,
                   participants=None, budget_tokens=None, budget_usd=None) -> Room:
    """Create a draft room with its facilitator and participant seats. Validates everything first."""
    errors = {}
    if not isinstance(name, str) or not name.strip():
        errors["name"] = ["A name is required."]
    elif len(name) > 200:
        errors["name"] = ["At most 200 characters."]
    if not isinstance(topic, str) or not topic.strip():
        errors["topic"] = ["A topic is required."]
    if errors:
        raise ValidationFailed("The discussion is not valid.", errors)
    fmt = _choice(format, Room.Format, "format", Room.Format.DELIBERATION)
    room_kind = _choice(kind, Room.Kind, "kind", Room.Kind.DISCUSSION)
    rounds = _max_rounds(max_rounds)
    moderator = _moderator(owner, moderator_id)
    seats = _validate_participants(owner, moderator, participants)
    with transaction.atomic():
        room = Room.objects.create(
            name=name.strip(), topic=topic.strip(), format=fmt, kind=room_kind, max_rounds=rounds,
            owner=owner, moderator=moderator, budget_tokens=budget_tokens, budget_usd=budget_usd,
        )
        Seat.objects.create(room=room, agent=moderator, role=Seat.Role.FACILITATOR, position=0)
        Seat.objects.bulk_create(
            Seat(room=room, agent=agent, role=role, position=i + 1) for i, (agent, role) in enumerate(seats)
        )
        record_event(room, "discussion:status", {"status": room.status, "round": room.round, "maxRounds": room.max_rounds})
    return room


def _locked(room: Room) -> Room:
    return Room.objects.select_for_update().get(pk=room.pk)


def do_update_room(room: Room, *, name=None, topic=None, format=None, max_rounds=None, conclusion=None) -> Room:
    errors = {}
    if name is not None and (not isinstance(name, str) or not name.strip() or len(name) > 200):
        errors["name"] = ["A name of 1 to 200 characters is required."]
    if topic is not None and (not isinstance(topic, str) or not topic.strip()):
        errors["topic"] = ["A topic is required."]
    if errors:
        raise ValidationFailed("The update is not valid.", errors)
    if format is not None:
        _choice(format, Room.Format, "format")
    rounds = _max_rounds(max_rounds) if max_rounds is not None else None
    with transaction.atomic():
        room = _locked(room)
        if rounds is not None and rounds < room.round:
            raise ValidationFailed("maxRounds is below the rounds already run.", {"maxRounds": [f"At least {room.round}."]})
        if format is not None and room.status != Room.Status.DRAFT and format != room.format:
            raise StateConflict("The format can only change while the discussion is a draft.")
        for field, value in (("name", name and name.strip()), ("topic", topic and topic.strip()), ("format", format),
                             ("max_rounds", rounds), ("conclusion", conclusion)):
            if value is not None:
                setattr(room, field, value)
        room.save()
        record_event(room, "discussion:status", {"status": room.status, "round": room.round, "maxRounds": room.max_rounds})
    return room


def do_change_moderator(room: Room, user, moderator_id) -> Room:
    moderator = _moderator(user, moderator_id)
    with transaction.atomic():
        room = _locked(room)
        if room.status != Room.Status.DRAFT:
            raise StateConflict("The facilitator can only change while the discussion is a draft.")
        if room.seats.filter(agent=moderator).exclude(role=Seat.Role.FACILITATOR).exists():
            raise ValidationFailed("The facilitator cannot also be a participant.", {"moderatorId": ["That agent is seated as a participant."]})
        room.seats.filter(role=Seat.Role.FACILITATOR).delete()
        Seat.objects.create(room=room, agent=moderator, role=Seat.Role.FACILITATOR, position=0)
        room.moderator = moderator
        room.save(update_fields=["moderator", "updated_at"])
    return room


def do_delete_room(room: Room) -> None:
    room_id = room.pk
    with transaction.atomic():
        room.delete()
        transaction.on_commit(lambda: realtime.revoke(room_id))


def do_share_room(room: Room, *, username, access) -> RoomMember:
    if access not in RoomMember.Access.values:
        raise ValidationFailed("Unknown access.", {"access": ["Must be viewer or participant."]})
    user = get_user_model().objects.filter(username=username).first() if isinstance(username, str) else None
    if user is None:
        raise ValidationFailed("Unknown user.", {"username": [f"No user named {username!r}."]})
    if user.pk == room.owner_id:
        raise ValidationFailed("The owner already has full access.", {"username": ["That user owns the discussion."]})
    with transaction.atomic():
        member, _ = RoomMember.objects.update_or_create(room=room, user=user, defaults={"access": access})
    return member


def do_unshare_room(room: Room, *, username) -> bool:
    with transaction.atomic():
        member = RoomMember.objects.filter(room=room, user__username=username).first()
        if member is None:
            return False
        user_id = member.user_id
        member.delete()
        # Live connections of that person stop receiving the room at once.
        transaction.on_commit(lambda: realtime.revoke(room.pk, user_id))
    return True
