"""rooms.rows: the engine's writes with SQL built once store what the ORM would store."""
from decimal import Decimal

import pytest
from django.db import connection
from django.db.models.signals import post_save, pre_save
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from facilitation.runs.models import StepLease
from rooms import rows
from rooms.models import Invocation, Observation, Room, RoomEvent, Turn
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


def test_insert_stores_the_row_the_orm_would_store():
    room = make_discussion(make_user())
    values = dict(room_id=room.pk, agent_id=None, component="participant.turn", provider="fake", model="m-1",
                  input={"purpose": "turn", "nested": [1, "two", None]}, output="Ünïcode ✓", success=False,
                  error="boom", input_tokens=12, output_tokens=3, cost_usd=Decimal("0.001234"), correlation_id="1:2:1")
    before = timezone.now()
    ours = rows.create(Invocation, **values)
    theirs = Invocation.objects.create(**values)
    assert ours.pk and ours.pk != theirs.pk and not ours._state.adding
    fields = [f.attname for f in Invocation._meta.concrete_fields if f.attname not in ("id", "created_at")]
    stored = Invocation.objects.filter(pk__in=[ours.pk, theirs.pk]).values(*fields, "created_at")
    a, b = sorted(stored, key=lambda r: r["correlation_id"] + str(r["created_at"]))
    assert {k: a[k] for k in fields} == {k: b[k] for k in fields}
    assert Invocation.objects.get(pk=ours.pk).created_at >= before  # auto_now_add stamped by the field


def test_values_of_another_type_are_prepared_by_their_field_as_the_orm_does():
    room = make_discussion(make_user())
    odd = dict(room_id=str(room.pk), component=7, input_tokens="12", success=1, cost_usd=0, correlation_id="odd")
    ours = rows.create(Invocation, **odd)
    theirs = Invocation.objects.create(**{**odd, "correlation_id": "odd-orm"})
    names = ("room_id", "component", "input_tokens", "success", "cost_usd")
    assert (Invocation.objects.values(*names).get(pk=ours.pk) == Invocation.objects.values(*names).get(pk=theirs.pk)
            == {"room_id": room.pk, "component": "7", "input_tokens": 12, "success": True, "cost_usd": Decimal(0)})


def test_insert_all_is_one_statement_and_gives_every_row_its_key_in_order():
    room = make_discussion(make_user())
    events = [RoomEvent(room=room, seq=100 + i, type="discussion:status", payload={"n": i}) for i in range(3)]
    with CaptureQueriesContext(connection) as seen:
        rows.insert_all(events)
    assert sum(q["sql"].startswith("INSERT") for q in seen.captured_queries) == 1
    for event in events:
        stored = RoomEvent.objects.get(pk=event.pk)
        assert (stored.seq, stored.payload) == (event.seq, event.payload)
    assert rows.insert_all([]) == []


def test_foreign_keys_and_defaults_come_from_the_instance():
    room = make_discussion(make_user())
    turn = rows.create(Turn, room=room, number=4)
    obs = rows.insert(Observation(room=room, seq=55, turn=turn, author_name="Ada", content="hello", markers=[{"type": "vote"}]))
    stored = Observation.objects.get(pk=obs.pk)
    assert stored.turn_id == turn.pk and stored.markers == [{"type": "vote"}] and stored.data == {}
    assert stored.kind == Observation._meta.get_field("kind").default


def test_update_sets_only_the_named_fields_and_stamps_auto_now():
    room = make_discussion(make_user())
    stamped = Room.objects.values_list("updated_at", flat=True).get(pk=room.pk)
    Room.objects.filter(pk=room.pk).update(name="renamed elsewhere")
    room.round, room.engine_state, room.name = 3, {"phase": "turn"}, "not written"
    assert rows.update(room, ("round", "engine_state", "updated_at"))
    stored = Room.objects.get(pk=room.pk)
    assert (stored.round, stored.engine_state, stored.name) == (3, {"phase": "turn"}, "renamed elsewhere")
    assert stored.updated_at > stamped
    Room.objects.filter(pk=room.pk).delete()
    assert rows.update(room, ("round",)) is False


def test_update_refuses_the_key():
    room = make_discussion(make_user())
    with pytest.raises(ValueError):
        rows.update(room, ("id",))


@pytest.mark.parametrize("model", [Invocation, Observation, Room, RoomEvent, Turn, StepLease])
def test_no_model_written_here_has_signal_receivers(model):
    """rooms.rows sends no signals: nothing may be listening for these models'."""
    assert not pre_save.has_listeners(model) and not post_save.has_listeners(model)


def test_json_and_datetime_values_are_stored_as_the_orm_stores_them():
    from datetime import datetime, timedelta, timezone as tz

    room = make_discussion(make_user())
    for value in ({"a": [1, {"b": None}]}, [1, "two"], "plain text", 42, True):
        ours = rows.create(Invocation, room_id=room.pk, component="c", input=value, correlation_id="ours")
        theirs = Invocation.objects.create(room_id=room.pk, component="c", input=value, correlation_id="theirs")
        assert Invocation.objects.get(pk=ours.pk).input == Invocation.objects.get(pk=theirs.pk).input == value
    elsewhere = datetime(2026, 3, 4, 5, 6, 7, 890, tzinfo=tz(timedelta(hours=-7)))
    room.ended_at = elsewhere
    assert rows.update(room, ("ended_at",))
    assert Room.objects.get(pk=room.pk).ended_at == elsewhere
    Room.objects.filter(pk=room.pk).update(ended_at=None)
    room.ended_at = None
    assert rows.update(room, ("ended_at",)) and Room.objects.get(pk=room.pk).ended_at is None


def test_new_builds_the_instance_the_model_would_build_with_fresh_defaults():
    room = make_discussion(make_user())
    for model, values in ((Observation, dict(room_id=room.pk, seq=3, author_name="Ada", content="hi", markers=[{"type": "vote"}])),
                          (RoomEvent, dict(room_id=room.pk, seq=4, type="discussion:turn", payload={"a": 1})),
                          (Invocation, dict(room_id=room.pk, component="c", cost_usd=Decimal("0.5")))):
        ours, theirs = rows.new(model, **values), model(**values)
        names = [f.attname for f in model._meta.concrete_fields]
        assert [getattr(ours, n) for n in names] == [getattr(theirs, n) for n in names]
        assert ours._state.adding and ours.pk is None
    first, second = rows.new(Observation, room_id=room.pk), rows.new(Observation, room_id=room.pk)
    first.data["x"] = 1
    assert second.data == {}  # a callable default is called for each instance
    by_object = rows.new(Observation, room=room, seq=9)  # not an attribute name: through the model's own keywords
    assert by_object.room_id == room.pk and by_object.room is room
    with pytest.raises(TypeError):
        rows.new(Observation, no_such_field=1)


def test_new_goes_through_the_model_when_something_listens_for_its_instances():
    from django.db.models.signals import post_init

    room = make_discussion(make_user())
    seen = []

    def listener(sender, instance, **kwargs):
        seen.append(instance.seq)

    post_init.connect(listener, sender=RoomEvent)
    try:
        event = rows.new(RoomEvent, room_id=room.pk, seq=7, type="discussion:turn")
    finally:
        post_init.disconnect(listener, sender=RoomEvent)
    assert seen == [7] and event.seq == 7
    rows.new(RoomEvent, room_id=room.pk, seq=8, type="discussion:turn")
    assert seen == [7]


def test_update_reads_a_deferred_field_before_writing_it():
    room = make_discussion(make_user())
    partial = Room.objects.only("id", "round").get(pk=room.pk)
    partial.round = 5
    assert rows.update(partial, ("round", "name"))
    stored = Room.objects.get(pk=room.pk)
    assert (stored.round, stored.name) == (5, room.name)


def test_choices_members_floats_big_counts_and_decimals_are_stored_as_the_orm_stores_them():
    from django.core.exceptions import ValidationError

    room = make_discussion(make_user())
    values = dict(room_id=room.pk, seq=2**40, author_kind=Observation.AuthorKind.FACILITATOR, kind=Observation.Kind.DECISION,
                  confidence=0.25, content="x")
    ours, theirs = rows.create(Observation, **values), Observation.objects.create(**{**values, "seq": 2**40 + 1})
    names = ("author_kind", "kind", "confidence")
    stored = Observation.objects.values(*names, "seq")
    assert stored.get(pk=ours.pk) == {**stored.get(pk=theirs.pk), "seq": 2**40}
    assert type(Observation.objects.get(pk=ours.pk).kind) is str
    for cost in (Decimal("0.000125"), Decimal(3), 0.5, "1.25"):
        ours = rows.create(Invocation, room_id=room.pk, component="c", cost_usd=cost, correlation_id="ours")
        theirs = Invocation.objects.create(room_id=room.pk, component="c", cost_usd=cost, correlation_id="theirs")
        assert Invocation.objects.get(pk=ours.pk).cost_usd == Invocation.objects.get(pk=theirs.pk).cost_usd
    for bad in (Decimal("NaN"), Decimal("Infinity")):
        with pytest.raises(ValidationError):
            rows.create(Invocation, room_id=room.pk, component="c", cost_usd=bad, correlation_id="bad")
    assert not Invocation.objects.filter(correlation_id="bad").exists()


def test_save_writes_every_field_of_a_row_that_exists_and_stamps_auto_now():
    room = make_discussion(make_user())
    stamped = Room.objects.values_list("updated_at", flat=True).get(pk=room.pk)
    room.name, room.round, room.engine_state, room.status = "renamed", 4, {"phase": "turn"}, Room.Status.PAUSED
    assert rows.save(room)
    stored = Room.objects.get(pk=room.pk)
    assert (stored.name, stored.round, stored.engine_state, stored.status) == ("renamed", 4, {"phase": "turn"}, "paused")
    assert stored.updated_at > stamped and stored.updated_at == room.updated_at
    names = [f.attname for f in Room._meta.concrete_fields]
    assert [getattr(stored, n) for n in names] == [getattr(room, n) for n in names]
    Room.objects.filter(pk=room.pk).delete()
    assert rows.save(room) is False and not Room.objects.filter(pk=room.pk).exists()  # never inserted again
