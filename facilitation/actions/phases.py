"""Votes, consensus and phases of a discussion: reading the latest votes and moving between phases.

Votes are the ``vote`` markers of the turns (of agents and of people) since the current phase
began (``Room.phase_started_seq``); the latest vote of each voter counts. In a phase whose voting
is ``ballot``, the values stay hidden until every speaking seat has voted (independent ballots:
nobody sees the others' votes before casting their own). A phase advances by itself when its
condition holds (``after_turn``, called when a turn is committed), or when the owner advances it.
"""
from django.db import transaction

from facilitation.actions.inputs import DeliberationIn
from facilitation.deliberation.consensus import PERSON, Ballot, ConsensusRules, evaluate
from facilitation.deliberation.templates import get_template
from rooms.audit import audit
from rooms.errors import StateConflict
from rooms.events import EventType, build, record_event
from rooms.models import Observation, Room, RoomEvent, Seat


def deliberation_settings(template=None, consensus=None, max_parallel=None) -> dict:
    """Validated model fields for a new discussion's template, consensus rules and parallel turns
    (parsed by the same fields as the creation body, ``inputs.DeliberationIn``)."""
    return DeliberationIn.parse({"template": template, "consensus": consensus, "max_parallel": max_parallel})


def deliberation_of(room: Room) -> dict:
    """The deliberation settings a copy of ``room`` starts with: its template (from the first phase), consensus rules
    and parallel turns."""
    return deliberation_settings(room.template or None, room.consensus or None, room.max_parallel)


def current_phase(room: Room):
    return get_template(room.template).phase(room.phase) if room.template and room.phase else None


def _speaking_seats(room: Room) -> list[Seat]:
    """The eligible voters: the speaking seats, and background seats while the phase takes votes."""
    phase = current_phase(room)
    roles = Seat.VOTING if phase is not None and phase.voting != "none" else Seat.SPEAKING
    return list(Seat.objects.filter(room=room, role__in=roles, is_active=True))


def latest_ballots(room: Room) -> list[Ballot]:
    """The latest vote of each voter since the phase began, in the order they were cast."""
    latest: dict[str, tuple[Ballot, str, int | None]] = {}
    rows = (Observation.objects.filter(room=room, seq__gt=room.phase_started_seq, kind=Observation.Kind.CONTRIBUTION)
            .exclude(markers=[]).order_by("seq").values("seq", "seat_id", "author_name", "author_kind", "markers"))
    for row in rows:
        for marker in row["markers"] or []:
            if marker.get("type") != "vote" or marker.get("value") not in ("READY", "CHANGES", "REJECT"):
                continue
            voter = str(row["seat_id"]) if row["seat_id"] else f"{PERSON}{row['author_name']}"
            latest.pop(voter, None)  # re-insert: the order is that of the latest votes
            latest[voter] = (Ballot(voter=voter, value=marker["value"], human=row["author_kind"] == "human", seq=row["seq"],
                                    name=row["author_name"]), row["author_name"], row["seat_id"])
    return [entry[0] for entry in latest.values()]


def votes_document(room: Room) -> dict:
    """``GET .../votes``: the phase, the tally, the latest votes and whether consensus is reached."""
    entries = {}
    rows = Observation.objects.filter(room=room, seq__gt=room.phase_started_seq).values("seq", "seat_id", "author_name")
    names = {r["seq"]: (r["author_name"], r["seat_id"]) for r in rows}
    ballots = latest_ballots(room)
    speaking = _speaking_seats(room)
    rules = ConsensusRules.load(room.consensus)
    verdict = evaluate(rules, ballots, eligible=len(speaking))
    phase = current_phase(room)
    voted = {b.voter for b in ballots}
    closed = room.is_terminal or (room.engine_state or {}).get("phase") in ("synthesis", "done")  # the ballot closed
    sealed = bool(phase and phase.voting == "ballot" and not closed and not all(str(s.pk) in voted for s in speaking))
    for ballot in ballots:
        name, seat_id = names.get(ballot.seq, ("", None))
        entries[ballot.voter] = {"seatId": seat_id, "name": name, "value": "sealed" if sealed else ballot.value,
                                 "seq": ballot.seq}
    tally = {"ready": None, "changes": None, "reject": None} if sealed else verdict.tally
    consensus = {"reached": False if sealed else verdict.reached,
                 "reason": "The ballot is open: votes are revealed when every participant has voted." if sealed else verdict.reason}
    template = get_template(room.template) if room.template else None
    return {"phase": room.phase or None, "template": room.template or None, "sealed": sealed, "tally": tally,
            "votes": list(entries.values()), "consensus": consensus, "rules": rules.as_payload(),
            # The voters the verdict counts: every speaking seat, and each person without a seat who voted.
            "eligible": len(speaking) + sum(1 for b in ballots if not b.seated),
            "voted": sum(1 for s in speaking if str(s.pk) in voted) + sum(1 for b in ballots if not b.seated),
            "phases": [p.as_payload() for p in template.phases] if template else [],
            "history": phase_history(room)}


def phase_history(room: Room) -> list[dict]:
    """Every phase change so far, oldest first: ``[{phase, seq}]`` (the seq of its ``discussion:phase`` event)."""
    rows = RoomEvent.objects.filter(room=room, type=EventType.PHASE).order_by("seq").values_list("seq", "payload")
    return [{"phase": (payload or {}).get("phase"), "seq": seq} for seq, payload in rows]


def _enter_next_phase(room: Room):
    """Move the locked ``room`` to its next phase and record the event (votes start over)."""
    carried = [{"seatId": v["seatId"], "name": v["name"], "value": v["value"], "seq": v["seq"]}
               for v in votes_document(room)["votes"]]
    following = get_template(room.template).next_phase(room.phase)
    room.phase = following.key
    room.phase_started_seq = room.seq + 1  # the phase event itself opens the new phase
    event = record_event(room, EventType.PHASE, build.phase(room.phase, carried))
    room.save(update_fields=["phase", "phase_started_seq", "updated_at"])
    return event


def do_advance_phase(room: Room, actor=None) -> Room:
    """The owner moves the discussion to its next phase (409 without a template, in the last phase, before it
    started or after it ended: a draft's first phase has not run yet)."""
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=room.pk)
        if room.is_terminal or room.status == Room.Status.DRAFT:
            message = ("The discussion has not started: its first phase has not run yet."
                       if room.status == Room.Status.DRAFT else f"The discussion is {room.status}.")
            raise StateConflict(message, {"status": room.status}, code="invalid_transition")
        if not room.template:
            raise StateConflict("This discussion has no phases (it was created without a template).", {}, code="no_phases")
        if get_template(room.template).next_phase(room.phase) is None:
            raise StateConflict(f"{room.phase!r} is the last phase.", {"phase": room.phase}, code="last_phase")
        before = room.phase
        _enter_next_phase(room)
        audit(room, actor, "phase.advance", before={"phase": before}, after={"phase": room.phase})
    return room


def phase_condition_holds(room: Room) -> bool:
    """Does the current phase's advance condition (consensus or everyone voted) hold now?"""
    phase = current_phase(room)
    if phase is None or phase.advance == "manual":
        return False
    ballots = latest_ballots(room)
    speaking = _speaking_seats(room)
    if phase.advance == "all_voted":
        voted = {b.voter for b in ballots}
        return bool(speaking) and all(str(s.pk) in voted for s in speaking)
    return evaluate(ConsensusRules.load(room.consensus), ballots, eligible=len(speaking)).reached


def concludes(room: Room) -> bool:
    """In the template's last phase, does its condition hold (the discussion should end with its synthesis)?"""
    return bool(room.template) and get_template(room.template).next_phase(room.phase) is None and phase_condition_holds(room)


def after_turn(room: Room) -> str:
    """Inside a turn's commit (``room`` locked): when the phase's condition holds, advance to the next
    phase (``"advanced"``) or, in the last phase, ask for the synthesis (``"conclude"``); else ``""``."""
    if not room.template or not phase_condition_holds(room):
        return ""
    if get_template(room.template).next_phase(room.phase) is None:
        return "conclude"
    _enter_next_phase(room)
    return "advanced"
