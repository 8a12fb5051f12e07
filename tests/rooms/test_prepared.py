"""Prepared queries give exactly what the ORM's ``.values()`` gives, on every database, in every thread."""
import threading
from decimal import Decimal

import pytest

from facilitation.context import _SEATS, SEAT_FIELDS
from facilitation.records import _LATEST_TURNS
from rooms.models import Agent, Observation, Seat
from rooms.prepared import Prepared
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def room():
    owner = make_user("prep-owner")
    room = make_discussion(owner)
    agent = Seat.objects.filter(room=room, agent__isnull=False).exclude(role="facilitator").first().agent
    Agent.objects.filter(pk=agent.pk).update(expertise=["caching", "ünïcode"], budget_usd=Decimal("1.250000"),
                                             cost_usd=Decimal("0.000123"), tokens_used=42)
    Seat.objects.create(room=room, user=owner, role="participant", position=9)
    for seq, kind in ((5, "contribution"), (6, "decision"), (7, "contribution")):
        Observation.objects.create(room=room, seq=seq, round=1, kind=kind, author_name="A", content=f"text {seq}",
                                   markers=[{"type": "vote", "value": "READY", "line": 0}], data={"pass": seq == 7})
    return room


def test_the_seats_are_what_values_gives(room):
    expected = list(Seat.objects.filter(room_id=room.pk).order_by("position", "id").values(*SEAT_FIELDS))
    got = _SEATS(room.pk)
    assert got == expected and len(got) >= 4
    agent_row = next(r for r in got if r["agent__expertise"])
    assert agent_row["agent__expertise"] == ["caching", "ünïcode"]  # JSON decoded
    assert agent_row["agent__budget_usd"] == Decimal("1.25") and agent_row["agent__tokens_used"] == 42
    assert any(r["user__username"] == "prep-owner" for r in got)


def test_the_latest_turns_are_what_values_gives(room):
    expected = list(Observation.objects.filter(room_id=room.pk, kind__in=("contribution", "decision")).order_by("-seq")
                    .values("seq", "kind", "round", "seat_id", "author_name", "content", "markers", "status", "data")[:800])
    got = _LATEST_TURNS(room.pk)
    assert got == expected and [r["seq"] for r in got] == [7, 6, 5]
    assert got[0]["markers"][0]["value"] == "READY" and got[0]["data"] == {"pass": True}


@pytest.mark.django_db(transaction=True)
def test_another_room_and_another_thread(room):
    other = make_discussion(make_user("prep-other"))
    results = {}
    thread = threading.Thread(target=lambda: results.setdefault("seats", _SEATS(other.pk)))
    thread.start()
    thread.join(10)
    assert [r["id"] for r in results["seats"]] == list(Seat.objects.filter(room=other).order_by("position", "id")
                                                        .values_list("id", flat=True))
    assert _SEATS(987654321) == []


def test_an_argument_must_be_one_parameter():
    twice = Prepared(lambda n: Seat.objects.filter(room_id=n, id=n).values("id"), 1)
    with pytest.raises(ValueError):
        twice(1)
    with pytest.raises(ValueError):
        Prepared(lambda: Seat.objects.values("id"), 0)


def test_a_phase_query_with_two_arguments(room):
    from facilitation.records import _PHASES_SINCE
    from rooms.models import RoomEvent

    for seq in (3, 8, 9):
        RoomEvent.objects.create(room=room, seq=seq, type="discussion:phase", payload={"phase": f"p{seq}"})
    assert _PHASES_SINCE(room.pk, 8) == [{"seq": 8, "payload": {"phase": "p8"}}, {"seq": 9, "payload": {"phase": "p9"}}]


def test_model_rows_are_what_the_orm_gives_as_instances(room):
    from rooms.models import Room

    Room.objects.filter(pk=room.pk).update(engine_state={"phase": "turn", "queue": [3, 4]}, budget_usd=Decimal("2.500000"),
                                           cost_usd=Decimal("0.000321"), tokens_used=77)
    prepared = Prepared(lambda pk: Room.objects.filter(pk=pk).order_by(), 1)
    [got] = prepared(room.pk)
    expected = Room.objects.get(pk=room.pk)
    assert isinstance(got, Room) and not got._state.adding and got._state.db == expected._state.db
    fields = [f.attname for f in Room._meta.concrete_fields]
    assert {f: getattr(got, f) for f in fields} == {f: getattr(expected, f) for f in fields}
    assert got.engine_state == {"phase": "turn", "queue": [3, 4]} and got.cost_usd == Decimal("0.000321")
    got.name = "Saved from a prepared row"
    got.save(update_fields=["name"])
    assert Room.objects.get(pk=room.pk).name == "Saved from a prepared row"
    assert prepared(987654321) == []


def test_a_locking_read_runs_inside_a_transaction(room):
    from django.db import transaction

    from facilitation.runs.leases import locked_room

    with transaction.atomic():
        assert locked_room(room.pk).pk == room.pk
        assert locked_room(987654321) is None


def test_model_rows_cannot_follow_relations():
    with pytest.raises(ValueError):
        Prepared(lambda n: Seat.objects.select_related("agent").filter(room_id=n), 1)(1)
