"""The room as the engine and the prompts see it: plain data loaded in one place."""
from dataclasses import dataclass, field

from django.conf import settings

from facilitation.engine import EngineState, SeatInfo
from rooms.models import Narrative, Observation, Room, Seat

DIGEST_LIMIT = 40
POINTS_LIMIT = 200


@dataclass
class AgentView:
    seat_id: int
    agent_id: int | None
    name: str
    persona_key: str = ""
    persona_prompt: str = ""
    role_prompt: str = ""
    provider: str = ""
    model: str = ""
    budget_tokens: int | None = None
    budget_usd: float | None = None
    tokens_used: int = 0
    cost_usd: float = 0.0


@dataclass
class RoomContext:
    room_id: int
    name: str
    topic: str
    format: str
    round: int
    max_rounds: int
    state: EngineState
    seats: list[SeatInfo]
    facilitator: AgentView
    agents: dict[int, AgentView]
    recent: list[dict] = field(default_factory=list)
    digest: list[str] = field(default_factory=list)
    narratives: list[str] = field(default_factory=list)
    points: list[dict] = field(default_factory=list)
    budget_tokens: int | None = None
    budget_usd: float | None = None
    tokens_used: int = 0
    cost_usd: float = 0.0

    @property
    def speakers(self) -> list[SeatInfo]:
        return [s for s in self.seats if s.speaks]

    @property
    def last_seat_id(self) -> int | None:
        return self.state.lastSeatId

    @property
    def airtime(self) -> dict:
        return self.state.airtime

    def seat(self, seat_id: int) -> SeatInfo:
        return next(s for s in self.seats if s.id == seat_id)


SEAT_FIELDS = (
    "id", "role", "is_active", "agent_id", "agent__name", "agent__description", "agent__provider", "agent__model",
    "agent__budget_tokens", "agent__budget_usd", "agent__tokens_used", "agent__cost_usd",
    "agent__persona__key", "agent__persona__prompt", "agent__role__base_prompt",
    "user__username", "user__first_name", "user__last_name",
)


def _seat_name(row: dict) -> str:
    if row["agent_id"]:
        return row["agent__name"]
    return f"{row['user__first_name']} {row['user__last_name']}".strip() or row["user__username"]


def _agent_view(row: dict) -> AgentView:
    """An agent (or a person) in a seat, from one row of ``SEAT_FIELDS``."""
    if not row["agent_id"]:
        return AgentView(seat_id=row["id"], agent_id=None, name=_seat_name(row))
    usd = row["agent__budget_usd"]
    return AgentView(
        seat_id=row["id"], agent_id=row["agent_id"], name=row["agent__name"],
        persona_key=row["agent__persona__key"] or "",
        persona_prompt=row["agent__persona__prompt"] or row["agent__description"],
        role_prompt=row["agent__role__base_prompt"] or "",
        provider=row["agent__provider"], model=row["agent__model"],
        budget_tokens=row["agent__budget_tokens"], budget_usd=float(usd) if usd is not None else None,
        tokens_used=row["agent__tokens_used"], cost_usd=float(row["agent__cost_usd"]),
    )


def _digest_line(obs: dict) -> str:
    first = " ".join(obs["content"].split())
    for prefix in ("[Offline rehearsal - not written by a language model]",):
        first = first.replace(prefix, "").strip()
    if len(first) > 160:
        first = first[:157].rsplit(" ", 1)[0] + "..."
    return f"{obs['author_name']} (round {obs['round']}): {first or '(no response)'}"


def load_context(room: Room) -> RoomContext:
    seats = list(Seat.objects.filter(room_id=room.pk).order_by("position", "id").values(*SEAT_FIELDS))
    fac_row = next((s for s in seats if s["role"] == Seat.Role.FACILITATOR), None)
    others = [s for s in seats if s["role"] != Seat.Role.FACILITATOR]
    infos = [SeatInfo(id=s["id"], name=_seat_name(s), role=s["role"], active=s["is_active"]) for s in others]
    agents = {s["id"]: _agent_view(s) for s in others}
    facilitator = _agent_view(fac_row) if fac_row else AgentView(seat_id=0, agent_id=None, name="Facilitator")

    keep = settings.CONVENE["RECENT_TURNS_VERBATIM"]
    contributions = Observation.objects.filter(room_id=room.pk, kind=Observation.Kind.CONTRIBUTION).order_by("-seq")
    latest = list(contributions.values("round", "author_name", "content", "status", "seat_id", "markers")[: keep + DIGEST_LIMIT])
    latest.reverse()
    recent_rows, older = latest[-keep:], latest[:-keep]
    roles = {s.id: s.role for s in infos}
    recent = [{"seatId": o["seat_id"], "speaker": o["author_name"], "role": roles.get(o["seat_id"], "participant"),
               "content": o["content"], "round": o["round"], "status": o["status"]} for o in recent_rows]
    # The structured points (questions, concerns, decisions, votes) of the turns in view, newest last.
    points = [
        {"speaker": o["author_name"], "type": m.get("type"), "text": m.get("text", ""), **({"value": m["value"]} if "value" in m else {})}
        for o in latest for m in o["markers"]
    ][-POINTS_LIMIT:]
    narratives = []
    if room.kind != Room.Kind.DISCUSSION:  # discussions keep no narratives: skip the query
        narratives = list(Narrative.objects.filter(room=room).order_by("-id").values_list("content", flat=True)[:10])[::-1]
    state = EngineState.load(room.engine_state, room.max_rounds, room.round)
    return RoomContext(
        room_id=room.pk, name=room.name, topic=room.topic, format=room.format, round=room.round, max_rounds=room.max_rounds,
        state=state, seats=infos, facilitator=facilitator, agents=agents, recent=recent,
        digest=[_digest_line(o) for o in older], narratives=narratives, points=points,
        budget_tokens=room.budget_tokens, budget_usd=float(room.budget_usd) if room.budget_usd is not None else None,
        tokens_used=room.tokens_used, cost_usd=float(room.cost_usd),
    )
