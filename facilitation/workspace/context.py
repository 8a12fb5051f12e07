"""The workspace as one agent seat (or the moderator) sees it at the start of its work: plain data."""
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef

from facilitation.workspace.adaptation import describe
from facilitation.workspace.search import search_room
from rooms.models import Narrative, Observation, PersonaAdaptation, Persona, Role, Room, Seat, TaskAssignment

OPEN_ITEMS = 12
ROUND_ITEMS = 30
SEARCH_HITS = 5


@dataclass
class Item:
    id: int
    type: str
    author: str
    content: str
    round: int = 0
    responding_to: int | None = None
    seat_id: int | None = None


@dataclass
class TaskItem:
    id: int
    title: str
    status: str
    priority: int
    assignee_id: int | None
    claimed_by_id: int | None


@dataclass
class AgentContext:
    room_id: int
    room_name: str
    topic: str
    round: int
    seat_id: int
    agent_id: int
    name: str
    provider: str
    model: str
    persona_id: int | None
    persona_name: str
    persona_prompt: str
    role_name: str
    role_prompt: str
    thresholds: dict
    adaptation_lines: list[str]
    narrative: dict | None
    open_questions: list[Item] = field(default_factory=list)
    open_blockers: list[Item] = field(default_factory=list)
    this_round: list[Item] = field(default_factory=list)
    tasks: list[TaskItem] = field(default_factory=list)
    found: list[Item] = field(default_factory=list)
    search_query: str = ""


def _items(qs) -> list[Item]:
    return [Item(id=o.pk, type=o.event_type, author=o.author_name, content=o.content, round=o.round,
                 responding_to=o.responding_to_id, seat_id=o.seat_id) for o in qs]


def unanswered(room: Room, *event_types: str):
    """The room's observations of these types that nobody has answered yet (no reply points at them)."""
    answered = Observation.objects.filter(responding_to=OuterRef("pk"))
    return Observation.objects.filter(room=room, event_type__in=event_types).exclude(event_type="").filter(~Exists(answered))


def _unanswered(room: Room, event_type: str):
    return unanswered(room, event_type).order_by("-seq")[:OPEN_ITEMS]


def latest_narrative(room: Room, before_round: int) -> dict | None:
    n = Narrative.objects.filter(room=room, round__lt=before_round).order_by("-round").first()
    if n is None:
        return None
    return {"round": n.round, "version": n.version, "content": n.content, "keyDecisions": n.key_decisions, "nextSteps": n.next_steps,
            "blockers": n.blockers, "edited": n.edited_at is not None}


def role_query(role: Role | None, persona: Persona | None, topic: str) -> str:
    """What the seat searches the room for: its role's function, else the topic's words."""
    basis = (role.function or role.name) if role is not None else ""
    return basis or topic


def agent_context(room: Room, seat: Seat, number: int) -> AgentContext:
    agent = seat.agent
    persona = Persona.objects.filter(pk=seat.persona_in_use_id).first()
    role = Role.objects.filter(pk=seat.role_in_use_id).first()
    adaptation = PersonaAdaptation.objects.filter(room=room, agent=agent, persona=persona).first()
    thresholds = adaptation.learned_thresholds if adaptation else {}
    tasks = [TaskItem(t.pk, t.title, t.status, t.priority, t.assignee_id, t.claimed_by_id)
             for t in TaskAssignment.objects.filter(room=room).exclude(status=TaskAssignment.Status.COMPLETED)
             .order_by("-priority", "id")[:OPEN_ITEMS * 2]
             if t.assignee_id in (None, seat.pk) or t.claimed_by_id == seat.pk]
    query = role_query(role, persona, room.topic)
    found = []
    if query.strip():
        hits = search_room(room.pk, query, limit=SEARCH_HITS).data["observations"]
        found = [Item(id=h["id"], type=h["type"], author=h["author"]["name"], content=h["content"], round=h["round"])
                 for h in hits]
    return AgentContext(
        room_id=room.pk, room_name=room.name, topic=room.topic, round=number, seat_id=seat.pk, agent_id=agent.pk,
        name=agent.name, provider=agent.provider, model=agent.model, persona_id=persona.pk if persona else None,
        persona_name=persona.name if persona else "", persona_prompt=(persona.prompt if persona else "") or agent.description,
        role_name=role.name if role else "", role_prompt=(role.base_prompt or role.function) if role else "",
        thresholds=thresholds, adaptation_lines=describe(thresholds), narrative=latest_narrative(room, number),
        open_questions=_items(_unanswered(room, Observation.EventType.QUESTION))[::-1],
        open_blockers=_items(_unanswered(room, Observation.EventType.BLOCKER))[::-1],
        this_round=_items(Observation.objects.filter(room=room, round=number).exclude(event_type="")
                          .order_by("-seq")[:ROUND_ITEMS])[::-1],
        tasks=tasks, found=found, search_query=query,
    )


@dataclass
class NarrativeContext:
    room_id: int
    room_name: str
    topic: str
    round: int
    moderator_id: int | None
    moderator_name: str
    persona_prompt: str
    provider: str
    model: str
    observations: list[Item]
    open_blockers: list[Item]
    tasks: list[TaskItem]
    previous: dict | None


def narrative_context(room: Room, number: int) -> NarrativeContext:
    mod = room.moderator
    persona = mod.persona if mod is not None else None
    return NarrativeContext(
        room_id=room.pk, room_name=room.name, topic=room.topic, round=number,
        moderator_id=mod.pk if mod else None, moderator_name=mod.name if mod else "Moderator",
        persona_prompt=(persona.prompt if persona else "") or "You summarise work fairly and briefly.",
        provider=mod.provider if mod else "", model=mod.model if mod else "",
        observations=_items(Observation.objects.filter(room=room, round=number).exclude(event_type="").order_by("seq")[:200]),
        open_blockers=_items(_unanswered(room, Observation.EventType.BLOCKER))[::-1],
        tasks=[TaskItem(t.pk, t.title, t.status, t.priority, t.assignee_id, t.claimed_by_id)
               for t in TaskAssignment.objects.filter(room=room).order_by("-priority", "id")[:40]],
        previous=latest_narrative(room, number),
    )


def seat_names(room: Room) -> dict[int, str]:
    return {s.pk: s.display_name for s in Seat.objects.filter(room=room).select_related("agent", "user")}
