"""facilitation.replays: the room state a committed step replayed is carried to the room's next step,
which feeds it only the new records; the result is always what a replay from the start gives."""
import random

import pytest

from facilitation import replays
from facilitation.actions.lifecycle import do_start_discussion
from facilitation.deliberation.state import SeatRef, replay
from facilitation.management.inline import drive_inline
from facilitation.runs.scheduling import inline
from rooms.models import Room
from tests.factories import make_discussion, make_user

SEATS = [SeatRef(1, "Ada", alias="ada"), SeatRef(2, "Bo", alias="bo"), SeatRef(3, "Cy", role="devil_advocate", alias="cy")]
LINES = [
    ("QUESTION: how do we roll the cache back", "question"), ("CONCERN: stale prices at the edge", "concern"),
    ("DECISION: keep the catalogue at the edge", "decision"), ("TODO: write the rollback runbook", "todo"),
    ("ASSIGNED: rollback runbook @bo", "assigned"), ("DONE: rollback runbook", "done"),
    ("VOTE: REJECT stale prices", "vote"), ("VOTE: READY", "vote"), ("@cy what do you think", "mention"),
]


def _record(seq: int, rng: random.Random) -> dict:
    if rng.random() < 0.3:
        return {"kind": "decision", "seq": seq, "round": seq // 2, "seatId": rng.choice([1, 2, 3]),
                "question": rng.choice(["Ada, how do we roll back?", "Bo, answer the stale prices concern"])}
    if rng.random() < 0.05:
        return {"kind": "phase", "seq": seq, "name": rng.choice(["explore", "converge"])}
    text, kind = rng.choice(LINES)
    marker = {"type": kind, "line": 0, "text": text.split(":", 1)[-1].strip()}
    if kind == "vote":
        marker["value"] = text.split()[1]
    elif kind == "mention":
        marker["target"] = "cy"
    return {"kind": "contribution", "seq": seq, "round": seq // 2, "seatId": rng.choice([1, 2, 3, None]),
            "speaker": "", "content": f"{text}\nand some words about edge caching", "markers": [marker],
            "status": rng.choice(["ok", "ok", "ok", "timed_out"]), "passed": rng.random() < 0.1}


def _same(a, b) -> bool:
    return vars(a) == vars(b)


@pytest.mark.parametrize("seed", range(20))
def test_a_carried_state_fed_the_new_records_equals_a_replay_from_the_start(seed):
    rng = random.Random(seed)
    records = [_record(seq, rng) for seq in range(1, 41)]
    key = ("default", seed, "created")
    seen = 0
    while seen < len(records):
        seen = min(len(records), seen + rng.choice([1, 1, 2, 3]))
        state = replays.take(key, SEATS, records[:seen])
        assert _same(state, replay(SEATS, records[:seen]))
        replays.keep(state)
    replays.forget_all()


def test_a_state_is_taken_by_one_step_at_a_time():
    records = [_record(seq, random.Random(seq)) for seq in range(1, 9)]
    key = ("default", 1, "created")
    first = replays.take(key, SEATS, records[:4])
    replays.keep(first)
    again = replays.take(key, SEATS, records[:6])
    assert again is first  # carried on and fed two records
    other = replays.take(key, SEATS, records[:6])  # taken meanwhile (a parallel slot, a page): its own replay
    assert other is not first and _same(other, first)
    replays.keep(again)
    replays.forget_all()


@pytest.mark.parametrize("change", ["seats", "window"])
def test_a_state_that_does_not_follow_on_is_replayed_from_the_start(change):
    records = [_record(seq, random.Random(seq)) for seq in range(1, 9)]
    key = ("default", 2, "created")
    first = replays.take(key, SEATS, records[:5])
    replays.keep(first)
    if change == "seats":  # a seat gone, say
        seats, later = SEATS[:2], records[:7]
    else:  # the oldest records left the window a step replays
        seats, later = SEATS, records[2:8]
    state = replays.take(key, seats, later)
    assert state is not first and _same(state, replay(seats, later))
    replays.forget_all()


@pytest.mark.django_db
def test_every_step_of_a_discussion_sees_the_state_a_replay_from_the_start_gives(monkeypatch):
    seen = []  # (the state's id, equal to a replay from the start when taken)
    real = replays.take

    def take(key, seats, records):
        state = real(key, seats, records)
        seen.append((id(state), _same(state, replay(list(seats), records))))
        return state

    monkeypatch.setattr(replays, "take", take)
    room = make_discussion(make_user(), max_rounds=4)
    with inline():
        do_start_discussion(room)
    assert drive_inline(room.pk).status == Room.Status.CONCLUDED
    assert len(seen) >= 9 and all(same for _, same in seen)
    assert len({state for state, _ in seen}) == 1  # one state, carried from step to step
