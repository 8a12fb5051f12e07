"""facilitation.actions.inputs: the bodies that create and change a discussion, parsed once."""
import pytest

from facilitation.actions.inputs import DiscussionPatchIn
from rooms.errors import ValidationFailed


def refused(body: dict) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as caught:
        DiscussionPatchIn.parse(body)
    return caught.value


def test_a_change_is_typed_and_the_status_comes_apart():
    fields, status = DiscussionPatchIn.parse({"name": "  Renamed  ", "max_rounds": 7, "conclusion": "", "status": "paused"})
    assert fields == {"name": "Renamed", "max_rounds": 7, "conclusion": ""} and status == "paused"


def test_null_leaves_a_field_as_it_is():
    assert DiscussionPatchIn.parse({"name": None, "topic": None, "status": None, "conclusion": None}) == ({}, None)


@pytest.mark.parametrize("body, headline, field", [
    ({"max_rounds": 0}, "maxRounds is out of range.", "maxRounds"),
    ({"max_rounds": "5"}, "maxRounds must be a whole number.", "maxRounds"),
    ({"max_rounds": ""}, "maxRounds must be a whole number.", "maxRounds"),
    ({"max_rounds": True}, "maxRounds must be a whole number.", "maxRounds"),
    ({"name": "   "}, "The update is not valid.", "name"),
    ({"name": 5}, "The update is not valid.", "name"),
    ({"topic": "t" * 100_000}, "The update is not valid.", "topic"),
    ({"format": "debate"}, "Unknown format.", "format"),
    ({"status": "exploded"}, "Unknown status.", "status"),
    ({"status": ["active"]}, "Unknown status.", "status"),
    ({"conclusion": 5}, "The conclusion must be text.", "conclusion"),
    ({"conclusion": "c" * 200_001}, "The update is not valid.", "conclusion"),
    ({"moderator_id": 1, "name": "fine"}, "Some fields cannot be changed here.", "moderatorId"),
])
def test_a_bad_change_names_its_field(body, headline, field):
    error = refused(body)
    assert error.message == headline and field in error.details


def test_the_first_field_wrong_names_the_error_and_every_field_is_listed():
    error = refused({"status": "exploded", "max_rounds": 0, "format": "debate"})
    assert error.message == "Unknown status." and set(error.details) == {"status", "maxRounds", "format"}
