"""facilitation.actions.inputs: the bodies that create and change a discussion, parsed once."""
import pytest

from facilitation.actions.inputs import DiscussionPatchIn
from rooms.errors import ValidationFailed


def refused(body: dict) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as caught:
        DiscussionPatchIn.parse(body)
    return caught.value


def test_a_change_is_typed_and_the_status_and_turn_policy_come_apart():
    fields, status, policy = DiscussionPatchIn.parse({"name": "  Renamed  ", "max_rounds": 7, "conclusion": "", "status": "paused",
                                                      "turn_policy": {"max_seconds": 600}})
    assert fields == {"name": "Renamed", "max_rounds": 7, "conclusion": ""} and status == "paused"
    assert policy == {"maxSeconds": 600}


def test_null_leaves_a_field_as_it_is():
    assert DiscussionPatchIn.parse({"name": None, "topic": None, "status": None, "conclusion": None}) == ({}, None, None)


@pytest.mark.parametrize("body, headline, field", [
    ({"turn_policy": {"max_events": 0}}, "turnPolicy is not valid.", "turnPolicy.maxEvents"),
    ({"turn_policy": {"max_seconds": 4}}, "turnPolicy is not valid.", "turnPolicy.maxSeconds"),
    ({"turn_policy": {"every": 3}}, "turnPolicy is not valid.", "turnPolicy.every"),
    ({"turn_policy": "fast"}, "turnPolicy must be an object.", "turnPolicy"),
    ({"max_rounds": 0}, "maxRounds is out of range.", "maxRounds"),
    ({"max_rounds": "5"}, "maxRounds must be a whole number.", "maxRounds"),
    ({"max_rounds": ""}, "maxRounds must be a whole number.", "maxRounds"),
    ({"max_rounds": True}, "maxRounds must be a whole number.", "maxRounds"),
    ({"name": "   "}, "The update is not valid.", "name"),
    ({"name": 5}, "name must be text.", "name"),
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
