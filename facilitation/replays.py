"""The room state a step replayed, carried on to the room's next step, which replays only what is new.

Every step replays the room state from its records (``facilitation.context``), and from one step to
the next only a record or two are new. As ``facilitation.records`` carries the rows, this carries the
``RoomState`` they were replayed into: a committed step hands its state back (``keep``), and the
room's next step takes it (``take``) and feeds it the records after the ones it has seen
(``deliberation.state.replay_onto``).

A state is taken, never shared: the step that takes it owns it (the state is changed in place) and
nobody else can take it until that step hands it back after its commit. A second reader at the same
time (a parallel slot, a page) replays from the start, as does a step whose seats read differently
(a seat added or gone, a ballot opened) or whose records no longer start where the carried ones did.
"""
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass

from facilitation.deliberation.state import RoomState, SeatRef, replay, replay_onto

#: At most this many rooms' states are kept per process (the least recently stepped ones are dropped).
KEEP_ROOMS = 256


@dataclass(frozen=True)
class _Seen:
    key: tuple
    refs: tuple
    first: int | None  # the seq of the first record replayed (None: there were none)
    count: int  # how many records were replayed
    last: int | None  # the seq of the last one


_kept: "OrderedDict[tuple, tuple[_Seen, RoomState]]" = OrderedDict()
_taken: "weakref.WeakKeyDictionary[RoomState, _Seen]" = weakref.WeakKeyDictionary()
_guard = threading.Lock()


def _seen(key: tuple, refs: tuple, records: list[dict]) -> _Seen:
    return _Seen(key, refs, records[0].get("seq") if records else None, len(records),
                 records[-1].get("seq") if records else None)


def _follows(seen: _Seen, refs: tuple, records: list[dict]) -> bool:
    """Are ``records`` the ones ``seen`` replayed, and maybe more after them, for the same seats?"""
    if seen.refs != refs or len(records) < seen.count:
        return False
    if not seen.count:
        return True
    return records[0].get("seq") == seen.first and records[seen.count - 1].get("seq") == seen.last


def take(key: tuple, seats: list[SeatRef], records: list[dict]) -> RoomState:
    """The room state of ``records`` for ``seats``: the state kept for room ``key`` fed only the new
    records when it follows on, else replayed from the start. The caller owns it (see the module)."""
    refs = tuple(seats)
    with _guard:
        kept = _kept.pop(key, None)
    if kept is not None and _follows(kept[0], refs, records):
        state = replay_onto(kept[1], records[kept[0].count:])
    else:
        state = replay(list(seats), records)
    with _guard:
        _taken[state] = _seen(key, refs, records)
    return state


def keep(state: RoomState | None) -> None:
    """Hand ``state`` back after the step that took it committed: the room's next step takes it on."""
    if state is None:
        return
    with _guard:
        seen = _taken.pop(state, None)
        if seen is None:
            return
        _kept[seen.key] = (seen, state)
        _kept.move_to_end(seen.key)
        while len(_kept) > KEEP_ROOMS:
            _kept.popitem(last=False)


def forget_all() -> None:
    """Drop every kept state (the tests, between databases)."""
    with _guard:
        _kept.clear()
