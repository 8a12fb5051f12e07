"""The room as the engine and the prompts see it: plain data loaded in one place.

Besides the seats and agents, the context carries the room state replayed from the
record (``facilitation.deliberation.state``): airtime, votes, open questions and
concerns, decisions, TODOs, mentions and the facilitator's own questions. Turns older
than the last few are folded into fixed chunks of rolling summaries
(``facilitation.deliberation.summaries``), so prompts stay append-only.
"""
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Callable

from django.conf import settings
from django.db import connections

from facilitation.deliberation.markers import parse_markers
from facilitation.deliberation.state import RoomState, SeatRef, replay
from facilitation.deliberation.summaries import chunk_summary, split_turns
from facilitation.deliberation.templates import TEMPLATES, Phase
from facilitation.engine import Blocker, EngineState, Facts, SeatInfo
from facilitation import replays
from facilitation.presets import get_preset
from facilitation.records import records as room_records
from rooms.models import Narrative, Room, Seat
from rooms import quiet
from rooms.prepared import Prepared

#: Seat roles that vote: the speaking roles, and ``background`` seats (which speak only to vote).
VOTING_ROLES = ("participant", "devil_advocate", "background")
#: What a sealed vote line reads as in a prompt while an independent ballot is open.
SEALED_LINE = "[ballot sealed]"


@dataclass(frozen=True)
class AgentView:
    """An agent (or a person) in a seat as the prompts see it. Made once per seat row as read, and shared by
    the steps that read the same row (``load_context``); frozen, so a prompt made of it can be kept too."""

    seat_id: int
    agent_id: int | None
    name: str
    alias: str = ""
    persona_key: str = ""
    persona_name: str = ""
    persona_prompt: str = ""
    persona_style: str = ""
    role_prompt: str = ""
    role_name: str = ""
    expertise: tuple = ()
    provider: str = ""
    model: str = ""
    budget_tokens: int | None = None
    budget_usd: float | None = None
    #: What the agent has used, when it has a budget (0 without one: nothing weighs it then).
    tokens_used: int = 0
    cost_usd: float = 0.0

    def __post_init__(self):
        if not isinstance(self.expertise, tuple):
            object.__setattr__(self, "expertise", tuple(self.expertise))


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
    room: RoomState | None = None
    #: Every contribution in view, oldest first: {seq, round, seatId, speaker, role, content, status}.
    turns: list[dict] = field(default_factory=list)
    #: How many of ``turns`` are folded into ``summaries`` (the rest are shown verbatim).
    summarized: int = 0
    summaries: list[str] = field(default_factory=list)
    narratives: list[str] = field(default_factory=list)
    budget_tokens: int | None = None
    budget_usd: float | None = None
    tokens_used: int = 0
    cost_usd: float = 0.0
    #: The template and its current phase (None without a template).
    template: str = ""
    phase: Phase | None = None
    phase_number: int = 0
    #: During an independent ballot not everyone has cast: votes from this seq on are hidden from every prompt.
    sealed_from: int | None = None
    #: (voted, voters) in the current phase.
    ballot: tuple = (0, 0)
    #: Voters who have not voted in the current phase, in seat order.
    unvoted: tuple = ()
    #: How many turns may run at once when several seats are asked together (1..3).
    max_parallel: int = 1
    #: ``guardrail_facts`` by rounds left: a step asks for them twice (its prompt, then its decision's check).
    _facts: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def sealed(self, seq) -> bool:
        """Is a vote cast at ``seq`` hidden (an open independent ballot)?"""
        return self.sealed_from is not None and seq is not None and seq >= self.sealed_from

    @property
    def speakers(self) -> list[SeatInfo]:
        return [s for s in self.seats if s.speaks]

    @property
    def last_seat_id(self) -> int | None:
        return self.state.lastSeatId

    @property
    def recent(self) -> list[dict]:
        return self.turns[self.summarized:]

    def seat(self, seat_id: int) -> SeatInfo:
        return next(s for s in self.seats if s.id == seat_id)

    @property
    def preset(self) -> dict | None:
        """The facilitator's built-in preset (selection policy, synthesis sections, fairness), if it is one."""
        return get_preset(self.facilitator.persona_key) if self.facilitator.persona_key else None

    @property
    def strict_fairness(self) -> bool:
        return bool(self.preset and self.preset.get("fairness") == "strict")

    def speaker_names(self) -> dict:
        """Lower-cased names and aliases of the speaking seats -> seat id (to salvage a decision)."""
        names = {}
        for seat in self.speakers:
            names.setdefault(seat.name.lower(), seat.id)
            alias = self.agents[seat.id].alias if seat.id in self.agents else ""
            if alias:
                names.setdefault(alias.lower(), seat.id)
        return names

    def guardrail_facts(self, rounds_left: int) -> Facts:
        facts = self._facts.get(rounds_left)
        if facts is None:
            facts = self._facts[rounds_left] = self._guardrail_facts(rounds_left)
        return facts

    def _guardrail_facts(self, rounds_left: int) -> Facts:
        room = self.room or RoomState([])
        blockers = [Blocker("reject", v.seat_id, v.speaker, v.text) for v in room.standing_rejects if not self.sealed(v.seq)]
        blockers += [Blocker("concern", c.seat_id, c.speaker, c.text, c.id) for c in room.open_concerns]
        speaking = {s.id for s in self.speakers}
        return Facts(
            speaking_ids=tuple(s.id for s in self.speakers), names={s.id: s.name for s in self.seats},
            turns={s.id: room.floor_of(s.id) for s in self.speakers}, words={s.id: room.words_of(s.id) for s in self.speakers},
            last_id=self.last_seat_id, mentioned=tuple(i for i in room.requested if i in speaking), blockers=tuple(blockers),
            rounds_left=rounds_left, strict=self.strict_fairness,
        )


SEAT_FIELDS = (
    "id", "role", "is_active", "agent_id", "agent__name", "agent__alias", "agent__description", "agent__provider",
    "agent__model", "agent__budget_tokens", "agent__budget_usd", "agent__tokens_used", "agent__cost_usd", "agent__expertise",
    "agent__persona__key", "agent__persona__name", "agent__persona__prompt", "agent__persona__style",
    "agent__role__base_prompt", "agent__role__name",
    "user__username", "user__first_name", "user__last_name",
)


def _seat_name(row: dict) -> str:
    if row["agent_id"]:
        return row["agent__name"]
    return f"{row['user__first_name']} {row['user__last_name']}".strip() or row["user__username"]


def _agent_view(row: dict) -> AgentView:
    """An agent (or a person) in a seat, from one row of ``SEAT_FIELDS``."""
    if not row["agent_id"]:
        return AgentView(seat_id=row["id"], agent_id=None, name=_seat_name(row), alias=row["user__username"] or "")
    usd = row["agent__budget_usd"]
    return AgentView(
        seat_id=row["id"], agent_id=row["agent_id"], name=row["agent__name"], alias=row["agent__alias"] or "",
        persona_key=row["agent__persona__key"] or "", persona_name=row["agent__persona__name"] or "",
        persona_prompt=row["agent__persona__prompt"] or row["agent__description"],
        persona_style=row["agent__persona__style"] or "",
        role_prompt=row["agent__role__base_prompt"] or "", role_name=row["agent__role__name"] or "",
        expertise=tuple(str(e) for e in (row["agent__expertise"] or []) if e),
        provider=row["agent__provider"], model=row["agent__model"],
        budget_tokens=row["agent__budget_tokens"], budget_usd=float(usd) if usd is not None else None,
        tokens_used=row["agent__tokens_used"], cost_usd=float(row["agent__cost_usd"]),
    )


# The questions every step asks, compiled once (``rooms.prepared``).
_SEATS = Prepared(lambda room_id: Seat.objects.filter(room_id=room_id).order_by("position", "id").values(*SEAT_FIELDS), 1)
#: Per room (database, id, creation time): each seat row as last read -> the views made of it (``_seat_views``).
_views: "OrderedDict[tuple, dict]" = OrderedDict()


class _ReadHere(threading.local):
    def __init__(self):
        #: Per room: the views this thread's latest read of its seats gave, in seat order.
        self.rooms: dict[tuple, list] = {}


_read_here = _ReadHere()
#: Where a seat row holds its agent's budgets and usage (``_without_unbudgeted_usage``), found once.
_USAGE_AT: tuple | None = None
_guard = threading.Lock()


def _redact_votes(content: str) -> str:
    """The text with its vote lines replaced (an open independent ballot)."""
    lines = str(content or "").splitlines()
    votes = {m["line"] for m in parse_markers(content) if m["type"] == "vote"}
    if not votes:
        return content
    return "\n".join(SEALED_LINE if n in votes else line for n, line in enumerate(lines))


def _ballot(seats: list[SeatInfo], records: list[dict], phase: Phase | None, started: int) -> tuple[list[SeatInfo], set, list]:
    """The seats (background seats asked to vote while the phase takes votes and they have not), who voted in
    the phase, and the voters."""
    voted = set()
    for rec in records:
        if rec.get("kind") == "contribution" and rec.get("seq", 0) >= started and rec.get("seatId") is not None:
            if any(m.get("type") == "vote" for m in rec.get("markers") or []):
                voted.add(rec["seatId"])
    takes_votes = phase is not None and phase.voting != "none"
    seats = [replace(s, asked_to_vote=takes_votes and s.id not in voted) if s.role == "background" else s for s in seats]
    voters = [s for s in seats if s.active and s.role in VOTING_ROLES and (s.role != "background" or takes_votes)]
    return seats, voted, voters


def _summaries(turns: list[dict], state: RoomState, count: int, chunk: int, sealed_from: int | None = None) -> list[str]:
    raised: dict = {}
    for item in state.items:
        raised.setdefault(item.seq, []).append(item.id)
    votes = {v.seq: v.value for v in state.vote_history if sealed_from is None or v.seq < sealed_from}
    return [chunk_summary(turns[i:i + chunk], raised, votes) for i in range(0, count, chunk)]


def assemble(*, room_id: int, name: str, topic: str, format: str, round: int, max_rounds: int, state: EngineState,
             seats: list[SeatInfo], agents: dict, facilitator: AgentView, records: list[dict], narratives: list[str] = (),
             budget_tokens: int | None = None, budget_usd: float | None = None, tokens_used: int = 0, cost_usd: float = 0.0,
             chunk: int = 3, keep: int = 2, template: str = "", phase: str = "", phase_started_seq: int = 0,
             max_parallel: int = 1, replayer: Callable[[list[SeatRef], list[dict]], RoomState] = replay) -> RoomContext:
    """A context from plain data: the room state replayed from ``records`` (see ``deliberation.state.replay``;
    ``replayer``: what replays them, ``replays.take`` for a room's steps).

    With a ``template`` and ``phase``, background seats are asked to vote while the phase takes votes, and
    during an independent ballot that not every voter has cast, the ballot's votes are hidden from the
    turns, the summaries and the room state the prompts show (the room state itself keeps them).
    """
    current = TEMPLATES[template].phase(phase) if template in TEMPLATES and phase else None
    seats, voted, voters = _ballot(list(seats), records, current, phase_started_seq)
    refs = [SeatRef(s.id, s.name, s.role, agents[s.id].alias if s.id in agents else "", s.active, s.asked_to_vote) for s in seats]
    room_state = replayer(refs, records)
    roles = {s.id: s.role for s in seats}
    closed = state.phase in ("synthesis", "done")  # the ballot closes with the discussion: everything is revealed
    open_ballot = (current is not None and current.voting == "ballot" and not closed
                   and not all(v.id in voted for v in voters))
    sealed_from = phase_started_seq if open_ballot else None
    turns = []
    for r in records:
        if r["kind"] != "contribution":
            continue
        content = r.get("content") or ""
        if sealed_from is not None and r["seq"] >= sealed_from:
            content = _redact_votes(content)
        turns.append({"seq": r["seq"], "round": r["round"], "seatId": r["seatId"], "speaker": r.get("speaker") or "",
                      "role": roles.get(r["seatId"], "participant"), "content": content, "status": r.get("status") or "ok",
                      "passed": bool(r.get("passed"))})
    summarized = split_turns(len(turns), chunk=chunk, keep=keep)
    number = [p.key for p in TEMPLATES[template].phases].index(phase) + 1 if current is not None else 0
    return RoomContext(
        room_id=room_id, name=name, topic=topic, format=format, round=round, max_rounds=max_rounds, state=state,
        seats=seats, facilitator=facilitator, agents=agents, room=room_state, turns=turns, summarized=summarized,
        summaries=_summaries(turns, room_state, summarized, chunk, sealed_from), narratives=list(narratives),
        budget_tokens=budget_tokens, budget_usd=budget_usd, tokens_used=tokens_used, cost_usd=cost_usd,
        template=template if current is not None else "", phase=current, phase_number=number, sealed_from=sealed_from,
        ballot=(len([v for v in voters if v.id in voted]), len(voters)),
        unvoted=tuple(v.id for v in voters if v.id not in voted), max_parallel=max_parallel,
    )


def _seat_view(row: dict) -> tuple[SeatInfo | None, AgentView]:
    """A seat row's views: its ``SeatInfo`` (None for the facilitator's seat) and its ``AgentView``."""
    if row["role"] == Seat.Role.FACILITATOR:
        return None, _agent_view(row)
    return SeatInfo(id=row["id"], name=_seat_name(row), role=row["role"], active=row["is_active"]), _agent_view(row)


def _without_unbudgeted_usage(row: tuple) -> tuple:
    """The seat row with its agent's usage read as 0 when the agent has no budget: usage is only ever weighed
    against a budget (``budget.over``), and without it the row reads the same from one call to the next."""
    budget_tokens, budget_usd, tokens_used, cost_usd = _USAGE_AT or _usage_at()
    if row[budget_tokens] is not None or row[budget_usd] is not None or (not row[tokens_used] and not row[cost_usd]):
        return row
    row = list(row)
    row[tokens_used] = row[cost_usd] = 0
    return tuple(row)


def _usage_at() -> tuple[int, int, int, int]:
    global _USAGE_AT
    names = _SEATS.names()
    _USAGE_AT = tuple(names.index(f"agent__{name}") for name in ("budget_tokens", "budget_usd", "tokens_used", "cost_usd"))
    return _USAGE_AT


def _seat_views(room: Room) -> list[tuple[SeatInfo | None, AgentView]]:
    """The views of the room's seats, in seat order. A row read exactly as at the room's step before gives the
    views made of it then (views are never changed once made); only the rows that moved are made again (an
    agent's usage moves with each of its calls). Per process, for at most ``KEEP_ROOMS`` rooms."""
    key = (room._state.db, room.pk, room.created_at)
    last = _read_here.rooms.get(key)
    if last is not None and quiet.steady(connections[room._state.db], room.pk):
        return last  # nobody wrote the database since this thread's last step of the room read them (``rooms.quiet``)
    rows = [_without_unbudgeted_usage(row) for row in _SEATS.raw(room.pk)]
    with _guard:
        known = _views.pop(key, None) or {}
    try:
        made = {row: known.get(row) or _seat_view(_SEATS.convert(row)) for row in rows}
    except TypeError:  # a value that cannot be a key (a driver's JSON as a list): nothing kept
        _read_here.rooms.pop(key, None)
        return [_seat_view(_SEATS.convert(row)) for row in rows]
    with _guard:
        _views[key] = made
        while len(_views) > replays.KEEP_ROOMS:
            _views.popitem(last=False)
    views = _read_here.rooms[key] = [made[row] for row in rows]
    while len(_read_here.rooms) > replays.KEEP_ROOMS:
        _read_here.rooms.pop(next(iter(_read_here.rooms)))
    return views


def forget_views() -> None:
    """Drop every room's kept seat views (the tests, between databases)."""
    with _guard:
        _views.clear()
    _read_here.rooms.clear()


def load_context(room: Room) -> RoomContext:
    views = _seat_views(room)
    infos = [info for info, _ in views if info is not None]
    agents = {view.seat_id: view for info, view in views if info is not None}
    facilitator = next((view for info, view in views if info is None),
                       None) or AgentView(seat_id=0, agent_id=None, name="Facilitator")
    narratives = []
    if room.kind != Room.Kind.DISCUSSION:  # discussions keep no narratives: skip the query
        narratives = list(Narrative.objects.filter(room=room).order_by("-id").values_list("content", flat=True)[:10])[::-1]
    cfg = settings.CONVENE
    return assemble(
        room_id=room.pk, name=room.name, topic=room.topic, format=room.format, round=room.round, max_rounds=room.max_rounds,
        state=EngineState.load(room.engine_state, room.max_rounds, room.round), seats=infos, agents=agents,
        facilitator=facilitator, records=room_records(room), narratives=narratives, budget_tokens=room.budget_tokens,
        budget_usd=float(room.budget_usd) if room.budget_usd is not None else None, tokens_used=room.tokens_used,
        cost_usd=float(room.cost_usd), chunk=int(cfg.get("SUMMARY_CHUNK", 3)), keep=int(cfg["RECENT_TURNS_VERBATIM"]),
        template=room.template, phase=room.phase, phase_started_seq=room.phase_started_seq,
        max_parallel=room.max_parallel or 1,
        replayer=lambda refs, records: replays.take((room._state.db, room.pk, room.created_at), refs, records),
    )
