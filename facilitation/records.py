"""The records a discussion's step replays (its contributions, the facilitator's questions and the
phase changes), carried forward from one step of a room to the next.

Every step replays the room from its latest records (``facilitation.context``). Reading and decoding
them all again at every step made the context the dearest read of a step, while only one or two
records are new each time. So a process carries, per room, the rows it read last, and at the room's
next step reads only the rows after them.

Why that is exact: an observation is only ever added, never changed, and it takes the room's next
``seq`` under the room's row lock, in the transaction that writes it. Once a room's ``seq`` is read,
every observation at or below it is committed and visible and stays as it is. A process therefore
carries the rows up to the ``seq`` of the room as the step read it (``Room.seq`` at the claim), and
the next step reads the rows above that. A room carried is known by its key and its creation time
(a key used again after a room is gone is another room). The carry is bounded in rooms and in rows:
a room with more rows than ``CARRY_ROWS`` is read whole at every step, as before.
"""
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from rooms.events import EventType
from rooms.models import Observation, Room, RoomEvent
from rooms.prepared import Prepared

#: Contributions replayed into the room state (a discussion has at most 20 rounds; people may add more).
REPLAY_LIMIT = 400
#: At most this many rooms are carried per process (the least recently stepped ones are dropped) ...
CARRY_ROOMS = 256
#: ... each with at most this many rows (a 20-round discussion has about 45).
CARRY_ROWS = 160

_KINDS = (Observation.Kind.CONTRIBUTION, Observation.Kind.DECISION)
_FIELDS = ("seq", "kind", "round", "seat_id", "author_name", "content", "markers", "status", "data")
_ROWS = REPLAY_LIMIT * 2

# The questions, compiled once (``rooms.prepared``).
_LATEST_TURNS = Prepared(lambda room_id: (
    Observation.objects.filter(room_id=room_id, kind__in=_KINDS).order_by("-seq").values(*_FIELDS)[:_ROWS]), 1)
_TURNS_AFTER = Prepared(lambda room_id, seq: (
    Observation.objects.filter(room_id=room_id, kind__in=_KINDS, seq__gt=seq).order_by("seq").values(*_FIELDS)[:CARRY_ROWS]), 2)
_PHASES_SINCE = Prepared(lambda room_id, seq: RoomEvent.objects.filter(room_id=room_id, type=EventType.PHASE, seq__gte=seq)
                         .order_by("seq").values("seq", "payload"), 2)


@dataclass(frozen=True)
class _Carry:
    created_at: datetime
    upto: int  # every row at or below this seq is in ``rows``
    rows: tuple  # oldest first
    made: tuple  # each row's record (``_record_of``), made once when the row joined the carry


_carried: "OrderedDict[tuple, _Carry]" = OrderedDict()
_guard = threading.Lock()


def _latest(room_id: int) -> list[dict]:
    rows = _LATEST_TURNS(room_id)
    rows.reverse()
    return rows


def rows_of(room: Room) -> list[dict]:
    """The room's latest contribution and decision rows (at most ``REPLAY_LIMIT * 2``), oldest first."""
    return _read(room)[0]


def _read(room: Room) -> tuple[list[dict], list]:
    """``rows_of``, and each row's record (``_record_of``): those of carried rows as made before."""
    key = (room._state.db, room.pk)
    with _guard:
        carry = _carried.get(key)
    if carry is None or carry.created_at != room.created_at or carry.upto > room.seq:
        rows, made = _latest(room.pk), []
    elif carry.upto == room.seq:  # nothing was written since: no query
        rows, made = list(carry.rows), list(carry.made)
    else:
        new = _TURNS_AFTER(room.pk, carry.upto)
        rows, made = (_latest(room.pk), []) if len(new) >= CARRY_ROWS else ([*carry.rows, *new], list(carry.made))
    made += [_record_of(row) for row in rows[len(made):]]
    known = len(rows)  # rows after the room's seq came after the room was read: not carried
    while known and rows[known - 1]["seq"] > room.seq:
        known -= 1
    with _guard:
        if known <= CARRY_ROWS:
            _carried[key] = _Carry(room.created_at, room.seq, tuple(rows[:known]), tuple(made[:known]))
            _carried.move_to_end(key)
            while len(_carried) > CARRY_ROOMS:
                _carried.popitem(last=False)
        else:
            _carried.pop(key, None)
    return rows, made


def row_of(obs: Observation) -> dict:
    """The record row of an observation a step writes, as ``rows_of`` reads it back."""
    return {name: getattr(obs, name) for name in _FIELDS}


def wrote(room: Room, before: int, written: list[dict]) -> None:
    """A step's commit, holding ``room`` locked at seq ``before``, wrote ``written`` (its record rows; the
    room's ``seq`` is now past every seq it took). Once that commits, a carry that reached ``before``
    reaches the room's seq: no row of another writer can sit in between, because every seq is taken
    under the room's row lock. So the room's next step finds nothing to read."""
    key, created, upto = (room._state.db, room.pk), room.created_at, room.seq
    kept = tuple(row for row in written if row["kind"] in _KINDS)

    def extend() -> None:
        with _guard:
            carry = _carried.get(key)
            if (carry is not None and carry.created_at == created and carry.upto == before
                    and len(carry.rows) + len(kept) <= CARRY_ROWS):
                _carried[key] = _Carry(created, upto, carry.rows + kept, carry.made + tuple(_record_of(row) for row in kept))

    transaction.on_commit(extend, using=room._state.db)


def forget_all() -> None:
    """Drop every carried room (the tests, between databases)."""
    with _guard:
        _carried.clear()


def _record_of(row: dict) -> dict | None:
    """A row as the room state replays it; None for a facilitator's decision other than asking someone to speak.
    Shared by every step that reads the row: never changed."""
    if row["kind"] == Observation.Kind.DECISION:
        data = row["data"] or {}
        if data.get("decision") != "continue":
            return None
        return {"kind": "decision", "seq": row["seq"], "round": row["round"], "seatId": data.get("nextParticipantId"),
                "question": data.get("question") or ""}
    return {"kind": "contribution", "seq": row["seq"], "round": row["round"], "seatId": row["seat_id"],
            "speaker": row["author_name"], "content": row["content"], "markers": row["markers"] or [],
            "status": row["status"], "passed": bool((row["data"] or {}).get("pass"))}


def records(room: Room) -> list[dict]:
    """The contributions, the facilitator's questions and the phase changes, oldest first, as plain records."""
    rows, made = _read(room)
    found = [record for record in made if record is not None]
    if room.template and rows:
        phases = _PHASES_SINCE(room.pk, rows[0]["seq"])
        found += [{"kind": "phase", "seq": e["seq"], "name": (e["payload"] or {}).get("phase") or ""} for e in phases]
        found.sort(key=lambda r: r["seq"])
    return found
