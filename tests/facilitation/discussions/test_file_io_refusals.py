"""Importing a discussion file that holds what a room cannot store is 400 ``malformed_file`` naming the line, and
writes nothing: before, such files were 500 (a list as the status, a number as the participants, a negative or
huge round or seq, 1e400, a lone surrogate in a name) or were stored as no other path stores them (NUL characters,
a speaker longer than its column, a conclusion over its limit)."""
import json

import pytest
from rest_framework.test import APIClient

from facilitation.deliberation.discussion_file import DiscussionFile, FileTurn, parse, render
from facilitation.discussions.file_io import discussion_file, do_import_discussion
from rooms import limits
from rooms.errors import ValidationFailed
from rooms.models import Observation, Room
from tests.factories import make_discussion, make_token, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("owner")


@pytest.fixture
def text(owner):
    """A file of one of the owner's discussions with one turn, as ``render`` writes it."""
    room = make_discussion(owner)
    doc = parse(discussion_file(room))
    speaker = doc.header["participants"][0]["name"]
    doc.header.update(status="concluded", conclusion="Cache the catalogue.")
    return render(DiscussionFile(header=doc.header, turns=[
        FileTurn(seq=room.seq + 5, round=1, speaker=speaker, role="participant", content="Cache reads.\nVOTE: READY")]))


def _line(text: str, start: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), start=1) if line.startswith(start))


def _heading(text: str, **change) -> str:
    line = text.split("\n")[_line(text, "### Turn") - 1]
    visible, data = line.split("  <!-- convene:turn ")
    data = {**json.loads(data.removesuffix(" -->")), **change}
    return text.replace(line, f"{visible}  <!-- convene:turn {json.dumps(data)} -->")


def _header(text: str, key: str, raw: str) -> str:
    old = text.split("\n")[_line(text, f"{key}: ") - 1]
    return text.replace(old, f"{key}: {raw}")


def _refused(owner, text: str) -> dict:
    rooms, turns = Room.objects.count(), Observation.objects.count()
    with pytest.raises(ValidationFailed) as caught:
        do_import_discussion(owner, text)
    assert caught.value.code == "malformed_file"
    assert (Room.objects.count(), Observation.objects.count()) == (rooms, turns)
    return caught.value.details


def test_the_file_itself_imports(owner, text):
    room = do_import_discussion(owner, text)
    assert room.status == "concluded" and Observation.objects.filter(room=room, content__startswith="Cache reads").exists()


@pytest.mark.parametrize("key, raw", [
    ("status", '["concluded"]'), ("status", '{"a": 1}'), ("participants", "1"), ("participants", "true"),
    ("participants", "2.5"), ("conclusion", '["x"]'), ("facilitator", '"The\\ud800"'), ("name", '"Caching \\udfff"'),
    ("conclusion", '"a\\u0000b"'), ("topic", '"a\\ud800"'), ("maxRounds", "1e400"), ("maxRounds", "9" * 5000),
    ("participants", '[{"name": "\\ud800", "alias": "x", "role": "participant"}]'),
])
def test_a_header_value_a_room_cannot_take_is_refused_at_its_line(owner, text, key, raw):
    details = _refused(owner, _header(text, key, raw))
    assert details["line"] == _line(text, f"{key}: ")


def test_a_conclusion_over_its_limit_is_refused(owner, text):
    details = _refused(owner, _header(text, "conclusion", json.dumps("c" * (limits.CONCLUSION + 1))))
    assert details["line"] == _line(text, "conclusion: ") and str(limits.CONCLUSION) in details["reason"]


@pytest.mark.parametrize("change", [
    {"round": -1}, {"round": 10**7}, {"seq": 2**63}, {"seq": 10**30}, {"speaker": "S" * 201}, {"speaker": "a\u0000b"},
    {"speaker": "\ud800"}, {"kind": "\udfff"}, {"status": ["ok"]},
])
def test_a_turn_a_room_cannot_take_is_refused_at_its_heading(owner, text, change):
    details = _refused(owner, _heading(text, **change))
    assert details["line"] == _line(text, "### Turn")


def test_a_nul_character_in_a_turn_is_refused_at_its_line(owner, text):
    details = _refused(owner, text.replace("VOTE: READY", "VOTE: \x00READY"))
    assert details["line"] == _line(text, "VOTE: READY")


def test_over_rest_such_files_are_400_not_500(owner, text):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {make_token(owner)}")
    rooms = Room.objects.count()
    for bad in (_header(text, "status", "[1]"), _header(text, "participants", "true"), _heading(text, round=-1),
                _heading(text, seq=2**63), _header(text, "facilitator", '"\\ud800"'), text.replace('"seq": ', '"seq": 1e400, "x": ')):
        response = api.post("/api/discussions/import", bad.encode(), content_type="text/markdown")
        assert response.status_code == 400, response.content
        assert response.json()["error"]["code"] == "malformed_file"
    assert Room.objects.count() == rooms
