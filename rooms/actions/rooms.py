"""Creating, copying, changing, sharing and deleting rooms."""
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from rooms import limits, realtime
from rooms.audit import audit
from rooms.errors import NotFound, StateConflict, ValidationFailed
from rooms.events import EventType, build, record_event
from rooms.models import Agent, Persona, Role, Room, RoomMember, Seat
from rooms.queries import usable_by


def _persona(user, value, key: str, errors: dict) -> Persona | None:
    """A participant's ``persona_id`` (workspace rooms): a non-facilitator persona the user may use."""
    if value is None:
        return None
    row = usable_by(Persona, user).filter(pk=value, is_facilitator=False).first()
    if row is None:
        errors[key] = [f"Unknown persona {value!r}."]
    return row


def work_role_refusal(role: Role) -> str | None:
    """Why a workspace agent seat cannot work in ``role`` (one of ``Seat.NOT_WORK_ROLES``), or None: it can. Creating
    a room and swapping a seat's role say the same."""
    if role.key not in Seat.NOT_WORK_ROLES:
        return None
    return (f"A workspace agent cannot work as {role.name}: the narrator facilitates, and every agent publishes "
            "observations each round. Choose a working role.")


def _work_role(user, value, key: str, errors: dict) -> Role | None:
    """A participant's ``role_id`` (workspace rooms): a working role (``work_role_refusal``) the user may use."""
    if value is None:
        return None
    row = usable_by(Role, user).filter(pk=value).first()
    if row is None:
        errors[key] = [f"Unknown role {value!r}."]
    elif refusal := work_role_refusal(row):
        errors[key] = [refusal]
        return None
    return row


def _seats(user, moderator: Agent, participants: list[dict], kind: str) -> list[tuple[Agent, str, Persona | None, Role | None]]:
    """The participants' agents, roles, personas and functional roles: each agent usable by ``user``, seated once, not the
    facilitator; in a workspace, a working seat works in a working role (``Seat.NOT_WORK_ROLES``): its own or its agent's.
    A persona or functional role of the seat's own is for workspace rooms (a discussion's agents speak as themselves)."""
    errors: dict[str, list[str]] = {}
    agents = {a.pk: a for a in usable_by(Agent, user).select_related("role")}
    seen: set[int] = set()
    result: list[tuple[Agent, str, Persona | None, Role | None]] = []
    for i, p in enumerate(participants):
        key = f"participants[{i}]"
        agent = agents.get(p["agent_id"])
        if agent is None:
            errors[f"{key}.agent_id"] = [f"Unknown agent {p['agent_id']!r}."]
            continue
        if agent.pk == moderator.pk:
            errors[f"{key}.agent_id"] = ["The facilitator cannot also be a participant."]
            continue
        if agent.pk in seen:
            errors[f"{key}.agent_id"] = ["This agent is already seated."]
            continue
        if kind != Room.Kind.WORKSPACE:
            own = [(field, name) for field, name in (("persona_id", "personaId"), ("role_id", "roleId")) if p.get(field) is not None]
            for field, name in own:
                errors[f"{key}.{field}"] = [f"{name} is for workspace rooms: a discussion's agents speak with their own "
                                            "persona and role (choose the agent that has them)."]
            if own:
                continue
        role = p.get("role", Seat.Role.PARTICIPANT)
        work_role = _work_role(user, p.get("role_id"), f"{key}.role_id", errors)
        working_as = work_role or agent.role
        if (kind == Room.Kind.WORKSPACE and role in Seat.SPEAKING and working_as is not None
                and working_as.key in Seat.NOT_WORK_ROLES and f"{key}.role_id" not in errors):
            errors[f"{key}.agent_id"] = [f"{agent.name} works as {agent.role.name}, and every agent of a workspace publishes "
                                         "observations each round: seat an agent with a working role, give the seat one "
                                         "(roleId), or change the agent's role first."]
            continue
        persona = _persona(user, p.get("persona_id"), f"{key}.persona_id", errors)
        seen.add(agent.pk)
        result.append((agent, role, persona, work_role))
    if errors:
        raise ValidationFailed("Some participants are not valid.", errors)
    if not any(role in Seat.SPEAKING for _, role, _, _ in result):
        raise ValidationFailed("At least one speaking participant is required.", {"participants": ["Add a participant or a devil's advocate; observers do not speak."]})
    return result


def _moderator(user, moderator_id: int) -> Agent:
    """The facilitator: an agent ``user`` may use, with ``is_facilitator``."""
    agent = usable_by(Agent, user).filter(pk=moderator_id).first()
    if agent is None:
        raise ValidationFailed("Unknown facilitator.", {"moderatorId": [f"Unknown agent {moderator_id!r}."]})
    if not agent.is_facilitator:
        raise ValidationFailed("That agent is not a facilitator.", {"moderatorId": ["The moderator must be an agent with isFacilitator."]})
    return agent


def require_turn_policy_kind(kind: str) -> None:
    """A turn policy (when rounds end by themselves) belongs to workspace rooms only: 400 otherwise."""
    if kind != Room.Kind.WORKSPACE:
        raise ValidationFailed("turnPolicy is for workspace rooms.", {"turnPolicy": ["Only with kind workspace."]})


def do_create_room(owner, *, name: str, topic: str, moderator_id: int, participants: list[dict], format: str | None = None,
                   kind: str | None = None, max_rounds: int | None = None, budget_tokens: int | None = None,
                   budget_usd=None, deliberation: dict | None = None, turn_policy: dict | None = None) -> Room:
    """Create a draft room with its facilitator and participant seats.

    The arguments are typed and in range: callers parse what people send with
    ``facilitation.actions.inputs.DiscussionCreateIn`` (REST, command line, discussion files).
    ``participants`` are ``{agent_id, role?, persona_id?, role_id?}``; ``turn_policy`` is stored as given
    (``{maxEvents?, maxSeconds?}``). What needs the database is checked here: the facilitator and
    every agent and persona must be usable by ``owner``, each agent seated once, at least one speaker.
    """
    room_kind = kind or Room.Kind.DISCUSSION
    if turn_policy:
        require_turn_policy_kind(room_kind)
    moderator = _moderator(owner, moderator_id)
    seats = _seats(owner, moderator, participants, room_kind)
    with transaction.atomic():
        room = Room.objects.create(
            name=name, topic=topic, format=format or Room.Format.DELIBERATION, kind=room_kind,
            max_rounds=max_rounds or settings.CONVENE["DEFAULT_MAX_ROUNDS"], owner=owner, moderator=moderator,
            budget_tokens=budget_tokens, budget_usd=budget_usd, turn_policy=turn_policy or {},
            **(deliberation or {}),  # template, phase, consensus, max_parallel
        )
        Seat.objects.create(room=room, agent=moderator, role=Seat.Role.FACILITATOR, position=0)
        Seat.objects.bulk_create(
            Seat(room=room, agent=agent, role=role, persona=persona, work_role=work_role, position=i + 1)
            for i, (agent, role, persona, work_role) in enumerate(seats)
        )
        record_event(room, EventType.STATUS, build.status(room))
        audit(room, owner, "room.create", after={**_snapshot(room), "moderatorId": moderator.pk,
                                                "participants": [[agent.pk, role] for agent, role, _, _ in seats]})
    return room


def _snapshot(room: Room) -> dict:
    """What an audit row records of a room's editable fields."""
    return {"name": room.name, "topic": room.topic, "format": room.format, "kind": room.kind,
            "maxRounds": room.max_rounds, "conclusion": room.conclusion, "status": room.status,
            "budgetTokens": room.budget_tokens, "budgetUsd": None if room.budget_usd is None else str(room.budget_usd)}


def do_copy_room(room: Room, user, deliberation: dict | None = None) -> Room:
    """A new draft owned by ``user`` with the room's topic, format, facilitator, seats and limits, a workspace's
    turn policy and its seats' own personas and roles (those ``user`` may use), and ``deliberation`` (the template, from its first phase, consensus rules and parallel turns the
    copy starts with: ``facilitation.actions.phases.deliberation_of``).

    Nothing that was said is copied. Logged as the invocation ``room.copy``. A facilitation run is not copied (400):
    it has no seats to copy, and a new run is made from its own form.
    """
    if room.kind == Room.Kind.FACILITATION:
        raise ValidationFailed("A facilitation run cannot be copied; start a new run instead.",
                               {"kind": ["Discussions and workspaces are copied; a facilitation run is not."]})
    seats = [s for s in room.seats.exclude(role=Seat.Role.FACILITATOR).order_by("position", "id") if s.agent_id]
    participants = [{"agent_id": s.agent_id, "role": s.role} for s in seats]
    if room.kind == Room.Kind.WORKSPACE:  # a seat's own persona and role come along, where the copier may use them
        personas = set(usable_by(Persona, user).filter(pk__in=[s.persona_id for s in seats if s.persona_id],
                                                       is_facilitator=False).values_list("pk", flat=True))
        roles = set(usable_by(Role, user).filter(pk__in=[s.work_role_id for s in seats if s.work_role_id])
                    .exclude(key__in=Seat.NOT_WORK_ROLES).values_list("pk", flat=True))
        for seat, item in zip(seats, participants):
            item.update(persona_id=seat.persona_id if seat.persona_id in personas else None,
                        role_id=seat.work_role_id if seat.work_role_id in roles else None)
    suffix = " (copy)"
    name = room.name[: limits.NAME - len(suffix)] + suffix
    with transaction.atomic():
        copy = do_create_room(user, name=name, topic=room.topic, format=room.format, kind=room.kind,
                              moderator_id=room.moderator_id, max_rounds=room.max_rounds, participants=participants,
                              budget_tokens=room.budget_tokens, budget_usd=room.budget_usd, deliberation=deliberation,
                              turn_policy=room.turn_policy or None)
        audit(copy, user, "room.copy", before={"fromDiscussionId": room.pk}, after={"discussionId": copy.pk})
    return copy


def _locked(room: Room) -> Room:
    return Room.objects.select_for_update().get(pk=room.pk)


class _Clear:
    """``do_update_room``'s value for a budget the caller removes (None there means unchanged)."""

    def __repr__(self) -> str:
        return "CLEAR"


CLEAR = _Clear()
_CLEARABLE = ("budget_tokens", "budget_usd")


def do_update_room(room: Room, *, name: str | None = None, topic: str | None = None, format: str | None = None,
                   max_rounds: int | None = None, conclusion: str | None = None, budget_tokens=None,
                   budget_usd=None, actor=None) -> Room:
    """Change what is given (None: unchanged; ``CLEAR`` for a budget: no budget any more). The arguments
    are typed and in range: the API parses the body with ``facilitation.actions.inputs.DiscussionPatchIn``;
    what needs the room (rounds already run, a format fixed once started, a closed workspace) is checked here."""
    with transaction.atomic():
        room = _locked(room)
        if room.status in (Room.Status.COMPLETED, Room.Status.ARCHIVED):
            raise StateConflict(f"This workspace is {room.status}: it is read-only.", {"status": room.status}, code="room_closed")
        if max_rounds is not None and max_rounds < room.round:
            raise ValidationFailed("maxRounds is below the rounds already run.", {"maxRounds": [f"At least {room.round}."]})
        if format is not None and room.status != Room.Status.DRAFT and format != room.format:
            raise StateConflict("The format can only change while the discussion is a draft.")
        before = _snapshot(room)
        for field, value in (("name", name), ("topic", topic), ("format", format), ("max_rounds", max_rounds),
                             ("conclusion", conclusion), ("budget_tokens", budget_tokens), ("budget_usd", budget_usd)):
            if value is CLEAR:
                if field not in _CLEARABLE:
                    raise ValueError(f"{field} cannot be cleared")
                setattr(room, field, None)
            elif value is not None:
                setattr(room, field, value)
        after = _snapshot(room)
        if after == before:  # the values it already has: nothing to save, push or log
            return room
        room.save()
        record_event(room, EventType.STATUS, build.status(room))
        audit(room, actor, "room.update", before={k: v for k, v in before.items() if after[k] != v},
              after={k: v for k, v in after.items() if before[k] != v})
    return room


def do_change_moderator(room: Room, user, moderator_id: int) -> Room:
    """A draft's facilitator changes to ``moderator_id``; the one it has already changes nothing (no new seat,
    no audit row)."""
    moderator = _moderator(user, moderator_id)
    with transaction.atomic():
        room = _locked(room)
        if room.status != Room.Status.DRAFT:
            raise StateConflict("The facilitator can only change while the discussion is a draft.")
        if room.moderator_id == moderator.pk:
            return room
        if room.seats.filter(agent=moderator).exclude(role=Seat.Role.FACILITATOR).exists():
            raise ValidationFailed("The facilitator cannot also be a participant.", {"moderatorId": ["That agent is seated as a participant."]})
        previous = room.moderator_id
        room.seats.filter(role=Seat.Role.FACILITATOR).delete()
        Seat.objects.create(room=room, agent=moderator, role=Seat.Role.FACILITATOR, position=0)
        room.moderator = moderator
        room.save(update_fields=["moderator", "updated_at"])
        audit(room, user, "room.change_moderator", before={"moderatorId": previous}, after={"moderatorId": moderator.pk})
    return room


def do_delete_room(room: Room, actor=None) -> None:
    room_id = room.pk
    with transaction.atomic():
        # The room's row lock first: an action on the room running now finishes before its rows are
        # collected (and one that starts later finds no room), so nothing is added to a room being deleted.
        room = Room.objects.select_for_update().filter(pk=room_id).first()
        if room is None:
            raise NotFound("No such discussion.")
        # The room's own rows go with it: the audit row names it and stays.
        audit(None, actor, "room.delete", before={"id": room_id, "owner": room.owner_id, **_snapshot(room)})
        room.delete()
        transaction.on_commit(lambda: realtime.revoke(room_id))


def do_share_room(room: Room, *, username, access, actor=None) -> tuple[RoomMember, bool]:
    """Share the room with a user, or change their access; returns ``(member, created)``."""
    if username is None or (isinstance(username, str) and not username.strip()):
        raise ValidationFailed("username is required.", {"username": ["Name the user to share with."]})
    if not isinstance(username, str):
        raise ValidationFailed("username must be text.", {"username": ["A username, as text."]})
    if access not in RoomMember.Access.values:
        raise ValidationFailed("Unknown access.", {"access": ["Must be viewer or participant."]})
    # Unknown, deactivated and service accounts get one answer: nothing about who exists leaks.
    user = (get_user_model().objects.filter(username=username, is_active=True).first()
            if isinstance(username, str) and len(username) <= limits.USERNAME else None)
    if user is None:
        raise ValidationFailed("No such user.", {"username": ["No active user by that name can be added."]})
    if user.pk == room.owner_id:
        raise ValidationFailed("The owner already has full access.", {"username": ["That user owns the discussion."]})
    with transaction.atomic():
        previous = RoomMember.objects.select_for_update().filter(room=room, user=user).values_list("access", flat=True).first()
        if previous == access:  # already shared so: nothing changes, nothing is logged
            return RoomMember.objects.get(room=room, user=user), False
        member, created = RoomMember.objects.update_or_create(room=room, user=user, defaults={"access": access})
        audit(room, actor, "room.share", before=None if created else {"username": user.get_username(), "access": previous},
              after={"username": user.get_username(), "access": access})
        if not created and previous != access:  # their open pages show what the new access allows
            transaction.on_commit(lambda: realtime.access_changed(room.pk, user.pk, access))
    return member, created


def do_unshare_room(room: Room, *, username, actor=None) -> bool:
    with transaction.atomic():
        member = RoomMember.objects.select_for_update().filter(room=room, user__username=username).first()
        if member is None:
            return False
        user_id = member.user_id
        audit(room, actor, "room.unshare", before={"username": username, "access": member.access})
        member.delete()
        # Live connections of that person stop receiving the room at once.
        transaction.on_commit(lambda: realtime.revoke(room.pk, user_id))
    return True
