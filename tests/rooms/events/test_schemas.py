"""Event names and payload shapes: one source, and a validator that refuses what does not match."""
import re
from pathlib import Path

import pytest
from django.db import transaction

from rooms.events import EventType, build, record_event
from rooms.events.schemas import SCHEMAS, EventSchemaError, validate, validate_message
from rooms.events.types import LOGGED, Command, client_names
from rooms.models import Observation, RoomEvent
from tests.factories import make_discussion, make_user

CONTRACT_EVENTS = {
    "discussion:turn", "discussion:moderator", "discussion:concluded", "discussion:status", "discussion:revoked",
    "discussion:phase", "discussion:observation", "discussion:round", "discussion:narrative", "discussion:task",
    "discussion:artifact", "session:revoked",
    # Beyond the contract's list (workspace rooms): a persona/role swap, an adaptation learned or tuned.
    "discussion:participant", "discussion:adaptation",
    # Chat bridges: deliveries and chat links.
    "discussion:delivery", "discussion:link",
}
CONTRACT_COMMANDS = {"discussion:join", "discussion:leave", "discussion:pause", "discussion:resume", "discussion:stop",
                     "discussion:conclude", "discussion:comment"}


def test_names_are_the_contract_and_every_event_has_a_schema():
    assert CONTRACT_EVENTS <= {t.value for t in EventType}  # later features add their own
    assert all(t.value.startswith(("discussion:", "session:")) for t in EventType)
    assert {c.value for c in Command} == CONTRACT_COMMANDS
    assert set(SCHEMAS) == set(EventType)
    assert EventType.REVOKED not in LOGGED and EventType.SESSION_REVOKED not in LOGGED
    names = client_names()
    assert names["events"]["TURN"] == "discussion:turn" and names["commands"]["JOIN"] == "discussion:join"
    assert set(names["logged"]) == {t.value for t in LOGGED}


def _envelope(**data):
    return {"discussionId": 1, "seq": 4, "ts": "2025-01-01T00:00:00+00:00", **data}


def _turn(**over):
    turn = {"id": 9, "seq": 4, "round": 1, "kind": "contribution",
            "speaker": {"id": 3, "name": "Ada", "kind": "agent", "role": "participant"},
            "content": "Q: why?", "markers": [{"type": "question", "text": "why?", "line": 1}], "status": "ok",
            "provider": "rehearsal", "rehearsal": True, "tokens": 12, "data": {}, "createdAt": None}
    turn.update(over)
    return turn


def test_valid_payloads_of_every_kind_pass():
    decision = {"decision": "continue", "nextParticipantId": 3, "question": "q", "reasoning": "r", "fallback": None,
                "progress": {}}
    validate(EventType.TURN, _envelope(turn=_turn()))
    validate("discussion:moderator", _envelope(decision=decision, round=1, turn=_turn(kind="decision")))
    validate(EventType.CONCLUDED, _envelope(conclusion="Done.", status="concluded", turn=_turn(kind="synthesis")))
    validate(EventType.STATUS, _envelope(status="active", round=1, maxRounds=5))
    validate(EventType.PHASE, _envelope(**build.phase("design", [{"seatId": 3, "name": "Ada", "value": "READY", "seq": 4}])))
    validate(EventType.OBSERVATION, _envelope(**build.observation({"id": 1, "type": "question", "content": "c",
                                                                  "round": 1, "confidence": 0.5})))
    validate(EventType.ROUND, _envelope(**build.round_changed(2, "started")))
    validate(EventType.NARRATIVE, _envelope(**build.narrative({"id": 1, "round": 1, "content": "n", "version": 2})))
    validate(EventType.TASK, _envelope(**build.task({"id": 1, "title": "t", "status": "pending", "priority": 3, "version": 1})))
    validate(EventType.ARTIFACT, _envelope(**build.artifact({"done": False, "missing": ["Lead"], "roles": {}})))
    validate(EventType.REVOKED, build.revoked(1))
    validate(EventType.SESSION_REVOKED, build.session_revoked("gone"))


@pytest.mark.parametrize("event_type, payload, complaint", [
    (EventType.STATUS, _envelope(status="active", round=1), "missing maxRounds"),
    (EventType.STATUS, _envelope(status="sleeping", round=1, maxRounds=5), "status"),
    (EventType.STATUS, _envelope(status="active", round="1", maxRounds=5), "round"),
    (EventType.STATUS, _envelope(status="active", round=True, maxRounds=5), "round"),
    (EventType.STATUS, _envelope(status="active", round=1, maxRounds=5, extra=1), "unexpected extra"),
    (EventType.STATUS, {"status": "active", "round": 1, "maxRounds": 5}, "missing discussionId, seq, ts"),
    (EventType.TURN, _envelope(turn=_turn(status="fine")), "turn.status"),
    (EventType.TURN, _envelope(turn=_turn(speaker={"id": 1, "name": "x", "kind": "agent"})), "missing role"),
    (EventType.TURN, _envelope(turn=_turn(markers=[{"type": "vote"}])), "markers[0]"),
    (EventType.ROUND, _envelope(round=1, state="paused"), "state"),
    (EventType.TASK, _envelope(task={"id": 1, "title": "t"}), "missing status"),
    (EventType.TASK, _envelope(task={"id": 1, "title": "t", "status": "pending"}), "missing version"),
    (EventType.REVOKED, {"discussionId": 1, "seq": 2}, "unexpected seq"),
    ("discussion:unknown", {}, "unknown event type"),
])
def test_payloads_that_do_not_match_are_refused(event_type, payload, complaint):
    with pytest.raises(EventSchemaError, match=re.escape(complaint)):
        validate(event_type, payload)


@pytest.mark.django_db(transaction=True)
def test_record_event_takes_the_type_or_its_value_and_pushes_the_payload_it_stores(pushed):
    room = make_discussion(make_user())
    with transaction.atomic():
        record_event(room, EventType.STATUS, build.status(room))
        record_event(room, "discussion:status", build.status(room))
    rows = list(RoomEvent.objects.filter(room=room).order_by("seq"))[-2:]
    assert [r.type for r in rows] == ["discussion:status", "discussion:status"]
    assert [(t, p) for t, p, _ in pushed[-2:]] == [(r.type, r.payload) for r in rows]
    for row in rows:
        validate_message({"type": row.type, **row.payload})
    with pytest.raises(ValueError):
        record_event(room, "discussion:nonsense", {})
    with pytest.raises(ValueError):  # direct events go to connections, never into the log
        record_event(room, EventType.REVOKED, build.revoked(room.pk))


@pytest.mark.django_db(transaction=True)
def test_a_payload_off_its_schema_fails_the_push(pushed):
    from tests import event_checks

    room = make_discussion(make_user())
    with pytest.raises(EventSchemaError):
        with transaction.atomic():
            record_event(room, EventType.STATUS, {"status": room.status})
    assert event_checks.take_failures()  # the autouse check would fail this test at teardown
    assert not [p for t, p, _ in pushed if p.get("status") == room.status and "round" not in p]


@pytest.mark.django_db
def test_builders_render_rows_to_their_schema():
    room = make_discussion(make_user())
    seat = room.seats.exclude(role="facilitator").first()
    obs = Observation.objects.create(room=room, seq=1, round=1, seat=seat, author_name="Ada", content="VOTE: READY",
                                     markers=[{"type": "vote", "value": "READY", "text": "READY", "line": 1}])
    obs.refresh_from_db()
    validate(EventType.TURN, _envelope(**build.turn(obs)))
    validate(EventType.STATUS, _envelope(**build.status(room)))
    room.conclusion, room.status = "All agreed.", "concluded"
    validate(EventType.CONCLUDED, _envelope(**build.concluded(room, obs)))


def test_the_browser_code_spells_no_event_names():
    root = Path(__file__).resolve().parents[3] / "frontend" / "static" / "convene"
    quoted = re.compile(r"""["'`](discussion|session):""")
    offenders = [f"{p.name}:{n}" for p in root.glob("*.js") for n, line in enumerate(p.read_text().splitlines(), 1)
                 if quoted.search(line)]
    assert offenders == []
