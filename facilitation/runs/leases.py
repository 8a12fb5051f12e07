"""Leases on the slots of a room's current step: who may run it, and commit it.

A room's current step has one **slot** per concurrent call (one for a discussion turn, one per
agent of a workspace round), each a ``StepLease`` row. ``claim_step`` takes a slot's lease with
one conditional UPDATE; the work (a model call) runs outside any transaction, checking
``still_ours`` and extending the lease (``extend``) as it goes; ``locked_if_ours`` / ``finish``
run inside the commit's transaction with the room's row locked and end the slot only if the
lease is still the caller's. When a step's last slot is done the next step opens. A redelivered,
duplicated or abandoned step therefore never writes twice.

**Handed on.** When the thread that commits a step runs the room's next step itself right after
(a worker carrying the room on, the in-process driver), ``finish(..., hand_on=True)`` opens the
next step already claimed by that thread, in the same UPDATE: the claim is kept in the thread
(``claim_step`` takes it instead of claiming again) and costs no statement and no commit of its
own. It is an ordinary lease: if the thread dies, it lapses and the sweeper sends the step again;
a thread that does not run the step after all gives it back first (``let_go``).

The room comes with it (``hand_room``): the commit held the room's row locked and wrote it, so the
room as the commit left it is what a read would give while nobody else wrote it since. The step
checks that with a narrow read (its status, ``seq`` and ``updated_at``: every action on a room moves
one of them) and reads the whole room only when it changed, e.g. a pause or stop. On SQLite it first
asks ``rooms.quiet`` whether anybody wrote the database at all since that commit (no read of the room
then), and the commit whether anybody wrote since the claim (no read of the room's marks then).
"""
import secrets
import threading
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from functools import lru_cache, partial
from typing import Callable

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.models import Case, F, Q, Sum, Value, When
from django.utils import timezone

from facilitation import budget
from facilitation.runs.models import StepLease
from facilitation.runs.outages import rides_out
from rooms import quiet, rows, statements
from rooms.models import Room
from rooms.prepared import Prepared

RUNNING = (Room.Status.ACTIVE, Room.Status.PAUSED)
ACTIVE = (Room.Status.ACTIVE,)

# The room as every step reads it (at the claim) and locks it (at the commit): compiled once.
_ROOM = Prepared(lambda pk: Room.objects.filter(pk=pk).order_by(), 1)
_ROOM_LOCKED = Prepared(lambda pk: Room.objects.select_for_update().filter(pk=pk).order_by(), 1)
# What every write of a room moves (``_MARKS``): whether a room read or written before is still the room.
_MARKS = ("status", "seq", "updated_at")
_ROOM_MARKS = Prepared(lambda pk: Room.objects.filter(pk=pk).order_by().values(*_MARKS), 1)
_SLOTS = Prepared(lambda pk: StepLease.objects.filter(room_id=pk).order_by().values("slot", "step_seq"), 1)
_ROOM_MARKS_LOCKED = Prepared(lambda pk: Room.objects.select_for_update().filter(pk=pk).order_by().values(*_MARKS), 1)


def _same(marks: dict, room: Room) -> bool:
    return (marks["status"], marks["seq"], marks["updated_at"]) == (room.status, room.seq, room.updated_at)


def locked_room(room_id: int, seen: Room | None = None) -> Room | None:
    """The room with its row locked until the caller's transaction ends (None: it was deleted).

    ``seen``: the room as the caller read it before (a step's claim): when nobody wrote the room since
    (its status, ``seq`` and ``updated_at`` are as they were: every write moves one of them), that very
    object is the locked room, and only those three columns are read."""
    if seen is not None:
        if quiet.unchanged_since_claim(connections[DEFAULT_DB_ALIAS], room_id):  # nobody wrote since the claim read it
            return seen
        marks = next(iter(_ROOM_MARKS_LOCKED(room_id)), None)
        if marks is None:
            return None
        if _same(marks, seen):
            return seen
    return next(iter(_ROOM_LOCKED(room_id)), None)


@dataclass(frozen=True)
class Claim:
    room_id: int
    step_seq: int
    token: str
    attempt: int
    slot: int = 0
    slots: int = 1
    #: How long the lease lasts from a claim or heartbeat (seconds); a claim handed on lasts as long.
    lease: float = 0.0
    #: The room as the claim read it (``claim_step``): the commit's locked read takes it when it is unchanged.
    seen: Room | None = field(default=None, compare=False, repr=False)

    @property
    def correlation(self) -> str:
        """Links the rows one attempt at this slot wrote (its Invocation, its discarded calls)."""
        base = f"{self.room_id}:{self.step_seq}:{self.attempt}"
        return base if self.slots == 1 else f"{base}:{self.slot}"


@dataclass(frozen=True)
class OpenStep:
    """A step made ready: its seq, its slots (one task each) and when it may run.

    ``later`` lists the slots ready at another time than the others, as ``(slot, ready_at)``
    (a workspace round's clock runs out after ``maxSeconds`` while its agents start at once).
    """

    step_seq: int
    slots: int = 1
    ready_at: datetime | None = None
    later: tuple[tuple[int, datetime], ...] = ()

    def ready_times(self) -> list[tuple[int, datetime | None]]:
        """``(slot, ready_at)`` for every slot of the step."""
        later = dict(self.later)
        return [(slot, later.get(slot, self.ready_at)) for slot in range(self.slots)]


#: The lease on a slot is the claim's while the slot's row has the claim's step and token (a new step or
#: claim changes them): the columns and the claim's values, for the ORM (``_ours``) and the SQL below.
_OURS = ("room_id", "slot", "step_seq", "token")


def _ours_params(claim: Claim) -> list:
    return [claim.room_id, claim.slot, claim.step_seq, claim.token]


def _ours(claim: Claim):
    return StepLease.objects.filter(**dict(zip(_OURS, _ours_params(claim))))


def claim_step(room_id: int, step_seq: int, lease_seconds: float, slot: int = 0,
               may_run: Callable[[Room], bool] | None = None) -> tuple[Claim, Room] | None:
    """Take the lease on one slot of a room's step; the claim and the room as claimed, or None.

    Claimable: the room is active (or ``may_run(room)`` says so: a workspace's narrative is written
    while it is paused), the slot belongs to ``step_seq`` and is not done, it is ready
    (``ready_at`` reached) and nobody holds an unexpired lease on it. The room's status is read
    with the room (a join in the UPDATE costs more than the rare give-back of a paused room's slot).
    """
    claim = _handed.claims.get((room_id, step_seq, slot))
    room = _handed.rooms.pop((room_id, step_seq), None) if claim is not None and slot == 0 else None
    if claim is None:
        with transaction.atomic():  # one short write transaction (on SQLite the threads queue for it in turn)
            taken = _take(room_id, step_seq, lease_seconds, slot)
        if taken is None:
            return None
        claim = Claim(room_id=room_id, step_seq=step_seq, token=taken[0], attempt=taken[1], slot=slot, slots=taken[2],
                      lease=lease_seconds)
    # The room handed on holds while the database is as the commit that handed it on left it (``rooms.quiet``,
    # SQLite), or else while its marks read as that commit left them.
    steady = quiet.claimed(connections[DEFAULT_DB_ALIAS], room_id)
    if room is not None and not (steady or _unchanged(room)):
        room = None
    if room is None:  # read after the claim's commit: the writers' queue is not held up by a read
        room = _claimed_room(room_id)
    # A claim handed on is used from here on (a read that failed for good leaves it in hand, to ``let_go``).
    _handed.claims.pop((room_id, step_seq, slot), None)
    if room is None:
        return None
    allowed = may_run(room) if may_run is not None else room.status == Room.Status.ACTIVE
    if not allowed:  # paused or ended: not claimable, and no attempt used
        give_back(claim)
        return None
    return replace(claim, seen=room), room


@rides_out
def _claimed_room(room_id: int) -> Room | None:
    """The room as its step reads it once claimed; a short database outage is waited out, since the claim
    (taken, or handed on and not given back while the database is away) holds the step meanwhile."""
    return next(iter(_ROOM(room_id)), None)


@rides_out
def _unchanged(room: Room) -> bool:
    """Nobody wrote the room since ``room`` was read or written (a room handed on with its step)."""
    marks = next(iter(_ROOM_MARKS(room.pk)), None)
    return marks is not None and _same(marks, room)


def _take(room_id: int, step_seq: int, lease_seconds: float, slot: int) -> tuple[str, int, int] | None:
    """The claim's UPDATE: ``(token, attempt, slots)`` when the slot was taken."""
    now = timezone.now()
    token = secrets.token_hex(16)
    db = connections[DEFAULT_DB_ALIAS]
    at = partial(statements.at, db)
    taken = statements.fetch(db, _sql_claim(), [token, at(now + timedelta(seconds=lease_seconds)), room_id, slot, step_seq,
                                                False, at(now), at(now)])
    return (token, *taken[0]) if taken else None


def release_claim(claim: Claim) -> None:
    """Give the lease back without committing (a transient failure to retry, an abandoned call)."""
    _ours(claim).update(token="", lease_until=None)


def give_back(claim: Claim) -> None:
    """Give back a claim that could not run at all (the room's status forbids the step): no attempt used."""
    _ours(claim).update(token="", lease_until=None, attempt=F("attempt") - 1)


def still_ours(claim: Claim, statuses: tuple = RUNNING) -> bool:
    """The lease holds: no stop or forced conclusion took the step away (a pause lets it finish).

    ``statuses``: the room statuses in which the step's lease holds (``RUNNING`` unless the step says otherwise).
    """
    with connection.cursor() as cursor:
        cursor.execute(_sql_still_ours(len(statuses)), [*_ours_params(claim), claim.room_id, *statuses])
        return cursor.fetchone() is not None


def extend(claim: Claim, lease_seconds: float, statuses: tuple = RUNNING) -> bool:
    """Heartbeat: the lease now ends ``lease_seconds`` from now; False when it is no longer ours."""
    until = statements.at(connection, timezone.now() + timedelta(seconds=lease_seconds))
    with connection.cursor() as cursor:
        cursor.execute(_sql_extend(len(statuses)), [until, *_ours_params(claim), claim.room_id, *statuses])
        return cursor.rowcount > 0


def reserved(room_id: int, but_slot: int) -> tuple[int, float]:
    """What the calls in flight in the room's other slots may still use at most: the needs their attempts kept
    (``reserve``) on leases that hold (a slot done, given back or claimed anew no longer counts)."""
    held = (StepLease.objects.filter(room_id=room_id, done=False, lease_until__gt=timezone.now(), reserved_by=F("token"))
            .exclude(token="").exclude(slot=but_slot).aggregate(tokens=Sum("reserved_tokens"), usd=Sum("reserved_usd")))
    return int(held["tokens"] or 0), float(held["usd"] or 0)


@rides_out
def reserve(claim: Claim, need: tuple[int, float]) -> bool | None:
    """Check the room's budget for a call needing ``need`` and keep the need on the slot's lease, in one transaction
    under the room's row lock: the room's slots that check at the same time are served in turn, and each counts
    what the others' calls may still use. True: kept (until the slot is done); False: the room's budget does not
    cover it (nothing kept); None: the room is gone or the lease is no longer ours."""
    with transaction.atomic():
        room = locked_room(claim.room_id)
        if room is None:
            return None
        if budget.over(room, need, reserved(claim.room_id, claim.slot)):
            return False
        usd = Decimal(str(round(need[1], 6)))
        return bool(_ours(claim).update(reserved_tokens=need[0], reserved_usd=usd, reserved_by=claim.token)) or None


@dataclass(frozen=True)
class Finished:
    """The slot is committed; ``next`` is the step opened when it was the step's last slot."""

    next: OpenStep | None


def finish(claim: Claim, *, next_slots: int = 1, ready_at: datetime | None = None,
           later: dict[int, datetime] | None = None, hand_on: bool = False) -> Finished | None:
    """End the claimed slot inside the commit's transaction (the caller holds the room's row lock).

    None when the lease is no longer ours: the caller writes nothing. When every slot of the step
    is done, the next step opens with ``next_slots`` slots, ready at ``ready_at`` (default: now;
    ``later``: slots ready at another time); the caller sends it on commit (``scheduling.schedule``).
    ``hand_on``: this thread runs the next step itself, at once; when it has one slot and is ready
    now, it opens claimed by this thread (see the module).
    """
    if claim.slots == 1 and claim.slot == 0 and next_slots == 1 and not later:
        # The common case in one statement: check the lease and open the next step.
        now = timezone.now()
        ready = ready_at or now
        db = connections[DEFAULT_DB_ALIAS]
        at = partial(statements.at, db)
        # Handed on only from a transaction of its own: the claim reaches the thread when it commits.
        held = hand_on and ready <= now and claim.lease > 0 and len(db.atomic_blocks) == 1
        # Opened claimed by this thread (its first attempt), or free.
        token = secrets.token_hex(16) if held else ""
        attempt, until = (1, at(now + timedelta(seconds=claim.lease))) if held else (0, None)
        moved = statements.write(db, _sql_next_step(),
                                 [claim.step_seq + 1, attempt, token, until, at(ready), False, *_ours_params(claim)]) > 0
        if moved and held:
            handed = Claim(room_id=claim.room_id, step_seq=claim.step_seq + 1, token=token, attempt=1, lease=claim.lease)
            transaction.on_commit(lambda: _hand(handed))
        return Finished(OpenStep(claim.step_seq + 1, 1, ready)) if moved else None
    if not _ours(claim).update(done=True, token="", lease_until=None):
        return None
    if StepLease.objects.filter(room_id=claim.room_id, step_seq=claim.step_seq, done=False).exists():
        return Finished(None)
    return Finished(open_step(claim.room_id, slots=next_slots, ready_at=ready_at, step_seq=claim.step_seq + 1, later=later))


def locked_if_ours(claim: Claim, *, next_slots: int = 1, ready_at: datetime | None = None,
                   hand_on: Callable[[Room], bool] | None = None) -> Room | None:
    """Inside a commit's transaction: the room, row-locked, with the claimed slot finished
    (``finish``); None, with nothing written, when the lease is no longer the caller's.
    ``hand_on(room)``: whether this thread runs the next step itself (``finish``)."""
    room = locked_room(claim.room_id, seen=claim.seen)
    if room is None or room.status not in RUNNING:
        return None
    if finish(claim, next_slots=next_slots, ready_at=ready_at, hand_on=hand_on is not None and hand_on(room)) is None:
        return None
    return room


# --- claims handed on to the thread that runs the next step ----------------------------------------

class _Handed(threading.local):
    """The calling thread's claims handed on, by ``(room_id, step_seq, slot)``, and the rooms as the commits
    that handed them on left them, by ``(room_id, step_seq)``."""

    def __init__(self):
        self.claims: dict[tuple[int, int, int], Claim] = {}
        self.rooms: dict[tuple[int, int], Room] = {}


_handed = _Handed()


def _hand(claim: Claim) -> None:
    _handed.claims[(claim.room_id, claim.step_seq, claim.slot)] = claim


def hand_room(room: Room, step_seq: int) -> None:
    """Inside a commit's transaction, once ``room`` (locked) is written: when the commit hands step ``step_seq``
    on to this thread (``finish``), the step takes this room instead of reading it (see the module)."""
    key = (room.pk, step_seq)

    def keep() -> None:
        if (room.pk, step_seq, 0) in _handed.claims:
            _handed.rooms[key] = room

    transaction.on_commit(keep)
    quiet.committing(connections[DEFAULT_DB_ALIAS], room.pk)


def let_go(room_id: int, step_seq: int, slot: int = 0) -> None:
    """This thread will not run that step after all: give back the claim it was handed, if any, so that
    the worker sent the step can claim it at once (no attempt used)."""
    _handed.rooms.pop((room_id, step_seq), None)
    claim = _handed.claims.pop((room_id, step_seq, slot), None)
    if claim is not None:
        give_back(claim)


def let_go_all() -> None:
    """``let_go`` every claim this thread was handed and has not run (a driver that stops)."""
    for room_id, step_seq, slot in list(_handed.claims):
        let_go(room_id, step_seq, slot)


def open_step(room_id: int, *, slots: int = 1, ready_at: datetime | None = None, step_seq: int | None = None,
              later: dict[int, datetime] | None = None) -> OpenStep:
    """Make a new step the room's current one; whatever step was in flight loses its lease.

    ``later`` maps slots to a time they become ready other than ``ready_at`` (a timer slot).
    The caller holds the room's row lock (lifecycle actions, commits).
    """
    if slots < 1:
        raise ValueError("a step has at least one slot")
    seqs = {row["slot"]: row["step_seq"] for row in _SLOTS(room_id)}  # the room's slots, one read
    if step_seq is None:
        step_seq = seqs.get(0, 0) + 1
    ready = ready_at or timezone.now()
    if seqs:
        StepLease.objects.filter(room_id=room_id).update(
            step_seq=step_seq, slots=slots, attempt=0, token="", lease_until=None, ready_at=ready,
            # Slots beyond this step's count stay behind, done.
            done=Case(When(slot__lt=slots, then=Value(False)), default=Value(True)),
        )
    missing = [rows.new(StepLease, room_id=room_id, slot=s, step_seq=step_seq, slots=slots, ready_at=ready)
               for s in range(slots) if s not in seqs]
    if missing:  # new slots are written as the update above leaves the others
        rows.insert_all(missing)
    timers = tuple(sorted((slot, at) for slot, at in (later or {}).items() if slot < slots))
    for slot, at in timers:
        StepLease.objects.filter(room_id=room_id, slot=slot).update(ready_at=at)
    return OpenStep(step_seq, slots, ready, timers)


def advance(room: Room, *, slots: int = 1, ready_at: datetime | None = None,
            later: dict[int, datetime] | None = None) -> OpenStep:
    """Invalidate any step in flight and make the room's next step ready (lifecycle actions)."""
    return open_step(room.pk, slots=slots, ready_at=ready_at, later=later)


def current(room_id: int) -> OpenStep | None:
    """The room's current step (None before it ever started)."""
    row = StepLease.objects.filter(room_id=room_id, slot=0).values_list("step_seq", "slots", "ready_at").first()
    return OpenStep(*row) if row else None


def mark_ready(room_id: int) -> OpenStep | None:
    """The current step may run now (a resume): its waiting clock restarts unless it waits for a time."""
    now = timezone.now()
    StepLease.objects.filter(room_id=room_id, done=False).filter(Q(ready_at__isnull=True) | Q(ready_at__lt=now)).update(ready_at=now)
    return current(room_id)


def rearm(room_id: int, slot: int, ready_at: datetime) -> None:
    """A timer slot of the current step whose time passed unclaimed (its room was paused) becomes ready at ``ready_at``."""
    StepLease.objects.filter(room_id=room_id, slot=slot, done=False, lease_until__isnull=True,
                             ready_at__lte=timezone.now()).update(ready_at=ready_at)


def retime(room_id: int, slot: int, ready_at: datetime) -> bool:
    """A timer slot of the current step nobody holds and not yet done becomes ready at ``ready_at``
    (its time changed, e.g. a workspace round's length); False when the slot is held or done."""
    return StepLease.objects.filter(room_id=room_id, slot=slot, done=False, lease_until__isnull=True).update(ready_at=ready_at) > 0


def postpone(claim: Claim, ready_at: datetime) -> None:
    """Give a claim back with no attempt used; the slot becomes ready at ``ready_at`` (a timer that came early)."""
    _ours(claim).update(token="", lease_until=None, attempt=F("attempt") - 1, ready_at=ready_at)


def waiting(room_id: int) -> tuple[int, list[tuple[int, datetime | None]]] | None:
    """The current step's seq and its slots still to run (not done), each with its ready time."""
    rows = list(StepLease.objects.filter(room_id=room_id).values_list("slot", "step_seq", "slots", "ready_at", "done"))
    head = next((r for r in rows if r[0] == 0), None)
    if head is None:
        return None
    step_seq, slots = head[1], head[2]
    return step_seq, sorted((slot, ready) for slot, seq, _, ready, done in rows if seq == step_seq and slot < slots and not done)


def held(room_id: int) -> bool:
    """Somebody holds a lease on the room's current step."""
    return StepLease.objects.filter(room_id=room_id, done=False).exclude(token="").exists()


def stranded(stale_seconds: float, statuses: tuple = ACTIVE) -> list[tuple[int, int, int]]:
    """Slots of rooms in ``statuses`` (active ones unless told) to send again: ``(room_id, step_seq, slot)``.

    A slot whose lease expired (its worker died), or that was ready for ``stale_seconds`` and
    nobody claimed (its message was lost). Those waiting restart their clock.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=stale_seconds)
    rows = list(
        StepLease.objects.filter(room__status__in=statuses, done=False)
        .filter(Q(lease_until__lt=now) | Q(lease_until__isnull=True, ready_at__lt=stale))
        .values_list("pk", "room_id", "step_seq", "slot", "lease_until")
    )
    waiting = [pk for pk, _, _, _, until in rows if until is None]
    if waiting:
        StepLease.objects.filter(pk__in=waiting, lease_until__isnull=True).update(ready_at=now)
    return [(room_id, step_seq, slot) for _, room_id, step_seq, slot, _ in rows]


# --- the statements a step sends most, written once ---------------------------------------------
# Every step claims a slot and ends it, and every call in flight checks its lease twice a second:
# these few statements are built here once per process instead of by the ORM each time. Plain SQL
# that SQLite (3.35 or later, for RETURNING) and PostgreSQL both run; values go in as parameters.

def _q(name: str) -> str:
    return connection.ops.quote_name(name)


def _lease_table() -> str:
    return _q(StepLease._meta.db_table)


def _ours_where() -> str:
    return " AND ".join(f"{_q(column)} = %s" for column in _OURS)


def _in(count: int) -> str:
    return "(" + ", ".join(["%s"] * count) + ")"


@lru_cache(maxsize=None)
def _sql_claim() -> str:
    """The claim: one conditional UPDATE returning what the claim needs."""
    return (f"UPDATE {_lease_table()} SET {_q('token')} = %s, {_q('lease_until')} = %s, {_q('attempt')} = {_q('attempt')} + 1 "
            f"WHERE {_q('room_id')} = %s AND {_q('slot')} = %s AND {_q('step_seq')} = %s AND {_q('done')} = %s "
            f"AND ({_q('lease_until')} IS NULL OR {_q('lease_until')} < %s) AND ({_q('ready_at')} IS NULL OR {_q('ready_at')} <= %s) "
            f"RETURNING {_q('attempt')}, {_q('slots')}")


@lru_cache(maxsize=None)
def _sql_next_step() -> str:
    """``finish``'s common case: the lease is still ours, and the next step (one slot) opens, free
    (attempt 0, no token or lease) or handed on (claimed: attempt 1, a token and a lease)."""
    return (f"UPDATE {_lease_table()} SET {_q('step_seq')} = %s, {_q('attempt')} = %s, {_q('token')} = %s, "
            f"{_q('lease_until')} = %s, {_q('ready_at')} = %s, {_q('done')} = %s WHERE {_ours_where()}")


def _room_in(statuses: int) -> str:
    """The lease's room is in one of ``statuses`` (parameters: the room's id, then the statuses)."""
    return (f"EXISTS (SELECT 1 FROM {_q(Room._meta.db_table)} WHERE {_q('id')} = %s "
            f"AND {_q('status')} IN {_in(statuses)})")


@lru_cache(maxsize=None)
def _sql_still_ours(statuses: int) -> str:
    return f"SELECT 1 FROM {_lease_table()} WHERE {_ours_where()} AND {_room_in(statuses)}"


@lru_cache(maxsize=None)
def _sql_extend(statuses: int) -> str:
    return f"UPDATE {_lease_table()} SET {_q('lease_until')} = %s WHERE {_ours_where()} AND {_room_in(statuses)}"
