"""A discussion to its discussion file and back (``facilitation.deliberation.discussion_file``).

``discussion_file(room)`` writes the file; ``do_import_discussion(owner, text)`` creates a discussion
with its transcript from one. Turns keep their speaker, round, kind and text; markers are parsed
again from the text, so what a file says is what the imported discussion records. A turn the offline
rehearsal model wrote stays marked as one (its provider ``rehearsal``, as everything that labels a
rehearsal reads it); every other imported turn's provider is ``import``.

A file is refused (``malformed_file``, naming the line) when it holds what the database cannot store or
the API would refuse: text with a NUL character or a lone surrogate escape (``"\\ud800"``), a speaker
longer than its column, a seq or round beyond the largest a room counts to, a conclusion over its limit.
"""
from django.db import transaction
from django.db.models import Case, IntegerField, Value, When

from facilitation.actions.inputs import DiscussionCreateIn
from facilitation.deliberation.discussion_file import TURN_TEXT_KEYS, DiscussionFile, FileError, FileTurn, parse, render
from facilitation.deliberation.markers import parse_markers
from facilitation.deliberation.templates import get_template
from rooms import limits
from rooms.actions.rooms import do_create_room
from rooms.errors import ValidationFailed
from rooms.events import EventType, build, record_event
from rooms.models import Agent, Observation, Room, Seat
from rooms.queries import usable_by

REHEARSAL = "rehearsal"  # the provider of a turn the offline rehearsal model wrote
_KIND_OF_AUTHOR = {"decision": "facilitator", "synthesis": "facilitator"}

#: A small discussion file as ``discussion_file`` writes it (the API schema's example of an import), naming
#: the built-in Impartial Chair and Architect.
EXAMPLE_FILE = render(DiscussionFile(
    header={"name": "Caching strategy review", "topic": "Should we add a Redis cache in front of Postgres?",
            "format": "deliberation", "maxRounds": 2, "facilitator": "The Impartial Chair",
            "participants": [{"name": "Architect", "alias": "architect", "role": "participant"}],
            "status": "concluded", "conclusion": "Add a read-through cache for the catalogue only."},
    turns=[FileTurn(seq=2, round=1, speaker="Architect", role="participant",
                    content="Cache the catalogue reads only; writes stay on Postgres.\nVOTE: READY")]))
_TERMINAL = {Room.Status.CONCLUDED, Room.Status.STOPPED}
MAX_SEQ = 2**62  # as far as the transcript's afterSeq reads
MAX_ROUND = 1_000_000  # as far as the observations' round filter reads


def _participants(room: Room) -> list[dict]:
    seats = Seat.objects.filter(room=room).select_related("agent", "user").order_by("position", "id")
    return [{"name": s.display_name, "alias": (s.agent.alias if s.agent_id else ""), "role": s.role}
            for s in seats if s.role != Seat.Role.FACILITATOR]


def discussion_file(room: Room) -> str:
    rows = Observation.objects.filter(room=room).select_related("seat").order_by("seq")
    turns = []
    for obs in rows:
        role = Seat.Role.FACILITATOR if obs.author_kind == Observation.AuthorKind.FACILITATOR else (
            obs.seat.role if obs.seat_id else "person")
        turns.append(FileTurn(seq=obs.seq, round=obs.round, speaker=obs.author_name, role=role, kind=obs.kind,
                              author=obs.author_kind, status=obs.status, content=obs.content,
                              rehearsal=obs.provider == REHEARSAL))
    header = {"name": room.name, "topic": room.topic, "format": room.format, "maxRounds": room.max_rounds,
              "facilitator": room.moderator.name if room.moderator_id else "", "participants": _participants(room),
              "status": room.status, "conclusion": room.conclusion}
    for key in ("template", "phase"):
        value = getattr(room, key, None)
        if value:
            header[key] = value
    consensus = getattr(room, "consensus", None)
    if consensus:
        header["consensus"] = consensus
    return render(DiscussionFile(header=header, turns=turns))


def _agent(owner, name: str, alias: str, facilitator: bool) -> Agent | None:
    """The agent a file names: by alias, else by name. Aliases are unique per owner and apart from the
    built-ins' for new agents, but older rows may share one: then the agent whose name matches too, then
    the owner's own before a built-in, then the oldest, so the same file always finds the same agent."""
    agents = usable_by(Agent, owner).filter(is_facilitator=facilitator).annotate(
        other_name=Case(When(name__iexact=name, then=Value(0)), default=Value(1), output_field=IntegerField()))
    preference = ("other_name", "is_builtin", "id")
    if alias:
        found = agents.filter(alias=alias).order_by(*preference).first()
        if found:
            return found
    return agents.filter(name__iexact=name).order_by(*preference).first()


def _creation(header: dict, facilitator: Agent, seats: list[dict]) -> dict:
    """``do_create_room``'s arguments from a file's header, parsed like a new discussion's body."""
    body = {"name": header.get("name"), "topic": header.get("topic"), "format": header.get("format"),
            "moderator_id": facilitator.pk, "max_rounds": header.get("maxRounds"), "participants": seats,
            "template": header.get("template"), "consensus": header.get("consensus")}
    try:
        values = DiscussionCreateIn.parse(body)
    except ValidationFailed as exc:
        raise ValidationFailed(f"The discussion file's header is not valid: {exc.message}", exc.details,
                               code="malformed_file") from None
    settings = values["deliberation"]
    phase = header.get("phase")
    if phase not in (None, ""):
        if not settings.get("template"):
            raise ValidationFailed("The header names a phase but no template.", {"phase": phase}, code="malformed_file")
        keys = [p.key for p in get_template(settings["template"]).phases]
        if phase not in keys:
            raise ValidationFailed(f"Unknown phase {phase!r} for template {settings['template']!r}; one of {', '.join(keys)}.",
                                   {"phase": phase}, code="malformed_file")
        settings["phase"] = phase
    if "consensus" not in header:
        settings.pop("consensus", None)  # the file recorded none: keep it that way
    return values


def _unstorable(value) -> bool:
    """Whether text in ``value`` has a NUL character or a lone surrogate, which no database column takes."""
    if isinstance(value, str):
        return limits.unstorable(value) is not None
    if isinstance(value, dict):
        return any(_unstorable(k) or _unstorable(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_unstorable(v) for v in value)
    return False


def _check_storable(doc: DiscussionFile) -> None:
    """Raises ``FileError`` at the first line holding what a room cannot store."""
    for key, value in doc.header.items():
        if _unstorable(value):
            raise FileError(f"the value of {key!r} has a NUL character or a lone surrogate", doc.header_lines.get(key, 2))
    conclusion = doc.header.get("conclusion")
    if isinstance(conclusion, str) and len(conclusion) > limits.CONCLUSION:
        raise FileError(f"the conclusion is longer than {limits.CONCLUSION} characters", doc.header_lines["conclusion"])
    speaker_max = Observation._meta.get_field("author_name").max_length
    for turn in doc.turns:
        if turn.seq > MAX_SEQ or turn.round > MAX_ROUND:
            raise FileError(f"a turn's seq is at most {MAX_SEQ} and its round at most {MAX_ROUND}", turn.line)
        if len(turn.speaker) > speaker_max:
            raise FileError(f"a turn's speaker is longer than {speaker_max} characters", turn.line)
        if any(_unstorable(getattr(turn, key)) for key in TURN_TEXT_KEYS):
            raise FileError("a turn heading has a NUL character or a lone surrogate", turn.line)
        for offset, line in enumerate(turn.content.split("\n"), start=1):
            if _unstorable(line):
                raise FileError("a line has a NUL character", turn.line + offset)


def do_import_discussion(owner, text: str) -> Room:
    """Create a discussion and its transcript from a discussion file; nothing is written if anything is wrong."""
    try:
        doc = parse(text)
        _check_storable(doc)
    except FileError as exc:
        raise ValidationFailed(f"The discussion file is malformed at line {exc.line}: {exc.reason}.",
                               {"line": exc.line, "reason": exc.reason}, code="malformed_file") from None
    header = doc.header
    facilitator = _agent(owner, str(header.get("facilitator") or ""), "", True)
    if facilitator is None:
        raise ValidationFailed(f"No facilitator named {header.get('facilitator')!r} is available to you.",
                               {"facilitator": header.get("facilitator")}, code="unknown_facilitator")
    seats, missing = [], []
    for p in header.get("participants") or []:
        if not isinstance(p, dict):
            raise ValidationFailed("participants must be a list of objects.", {}, code="malformed_file")
        agent = _agent(owner, str(p.get("name", "")), str(p.get("alias", "")), False)
        if agent is None:
            missing.append(p.get("name"))
        else:
            seats.append({"agent_id": agent.pk, "role": p.get("role", "participant")})
    if missing:
        raise ValidationFailed(f"No participant agent available to you for: {', '.join(map(str, missing))}.",
                               {"participants": missing}, code="unknown_participant")
    status = header.get("status") if header.get("status") in _TERMINAL else Room.Status.STOPPED
    values = _creation(header, facilitator, seats)
    with transaction.atomic():
        room = do_create_room(owner, **values)
        by_name = {s.display_name: s for s in Seat.objects.filter(room=room).select_related("agent", "user")}
        # The file's seqs are kept when they fit after the creation event, so the file reads back the same.
        keep = all(t.seq > room.seq for t in doc.turns)
        last_seq = room.seq
        rows = []
        for turn in doc.turns:
            seat = by_name.get(turn.speaker)
            author = turn.author if turn.author in Observation.AuthorKind.values else _KIND_OF_AUTHOR.get(turn.kind, "agent")
            last_seq = turn.seq if keep else last_seq + 1
            rows.append(Observation(
                room=room, seq=last_seq, round=turn.round, seat=seat, author_name=turn.speaker, author_kind=author,
                kind=turn.kind if turn.kind in Observation.Kind.values else Observation.Kind.CONTRIBUTION,
                content=turn.content, markers=parse_markers(turn.content) if turn.kind == "contribution" else [],
                status=turn.status if turn.status in Observation.Status.values else Observation.Status.OK,
                provider=REHEARSAL if turn.rehearsal else "import",
            ))
        Observation.objects.bulk_create(rows)
        room.seq = last_seq
        room.round = max([t.round for t in doc.turns], default=0)
        room.status = status
        room.conclusion = str(header.get("conclusion") or "")
        room.save(update_fields=["seq", "round", "status", "conclusion", "updated_at"])
        record_event(room, EventType.STATUS, build.status(room))
    return room
