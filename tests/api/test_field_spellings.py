"""A body may spell a field in camelCase or snake_case; one that gives both spellings of a field with different
values is 400 naming the field, and nothing changes. It used to take one of them silently (the one written last).
Fields a route does not know are ignored, except on the routes docs/api.md lists (docs/api.md says so)."""
import pytest

from rooms.models import Room
from tests.api.conftest import create_body


@pytest.mark.parametrize("first, second", [("max_rounds", "maxRounds"), ("maxRounds", "max_rounds")])
def test_two_spellings_with_different_values_are_400_and_create_nothing(owner_api, catalog, first, second):
    body = create_body(catalog)
    body.pop("maxRounds")
    answer = owner_api.post("/api/discussions", {**body, first: 3, second: 7})
    assert answer.status_code == 400, answer.json()
    error = answer.json()["error"]
    assert error["code"] == "validation_error" and list(error["details"]) == ["maxRounds"], error
    assert "maxRounds" in error["message"]
    assert first in error["details"]["maxRounds"][0] and second in error["details"]["maxRounds"][0]
    assert not Room.objects.exists()


def test_a_nested_field_is_named_by_its_path(owner_api, catalog):
    body = create_body(catalog)
    body["participants"][1] = {"agent_id": catalog["bob"].pk, "agentId": catalog["cyd"].pk, "role": "participant"}
    error = owner_api.post("/api/discussions", body).json()["error"]
    assert list(error["details"]) == ["participants[1].agentId"], error
    assert not Room.objects.exists()


def test_a_patch_with_two_spellings_changes_nothing(owner_api, room):
    answer = owner_api.patch(f"/api/discussions/{room.pk}", {"name": "Renamed", "maxRounds": 4, "max_rounds": 6})
    assert answer.status_code == 400 and list(answer.json()["error"]["details"]) == ["maxRounds"]
    room.refresh_from_db()
    assert room.name != "Renamed" and room.max_rounds not in (4, 6)


def test_the_same_value_in_both_spellings_and_unknown_fields_are_fine(owner_api, catalog):
    body = {**create_body(catalog), "max_rounds": 3, "colour": "blue"}  # create_body has maxRounds 3
    answer = owner_api.post("/api/discussions", body)
    assert answer.status_code == 201, answer.json()
    assert answer.json()["data"]["maxRounds"] == 3 and "colour" not in answer.json()["data"]


def test_one_is_not_true(owner_api, room):
    """Values are compared as JSON: ``1`` and ``true`` differ."""
    answer = owner_api.patch(f"/api/discussions/{room.pk}", {"max_rounds": True, "maxRounds": 1})
    assert answer.status_code == 400 and list(answer.json()["error"]["details"]) == ["maxRounds"]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_bare_non_number_constant_is_not_json(owner_api, catalog, constant):
    """JSON has no NaN or Infinity: a body that uses them is a parse error (400) before any field reads it (a
    value kept as JSON, such as a seat's settings, would otherwise store what no JSON reader can read back)."""
    import json

    body = create_body(catalog)
    raw = json.dumps(body).replace(json.dumps(body["topic"]), constant)  # a text field would take it as "nan"
    assert f'"topic": {constant}' in raw
    answer = owner_api.client.generic("POST", "/api/discussions", raw, content_type="application/json")
    assert answer.status_code == 400, answer.content
    assert answer.json()["error"]["code"] == "parse_error", answer.json()  # refused as JSON, whatever the field
    assert not Room.objects.exists()


def test_the_routes_that_change_a_row_field_by_field_refuse_a_field_they_do_not_know(owner_api, people):
    """The exceptions docs/api.md lists: a misspelt change there is a 400 naming it, not a change silently lost."""
    from rooms.models import Seat, TaskAssignment
    from tests.workspace.helpers import agent_seats, make_workspace

    ws = make_workspace(people["owner"])
    seat = agent_seats(ws)[0]
    task = owner_api.post(f"/api/discussions/{ws.pk}/tasks", {"title": "Write the plan"}).json()["data"]
    before = (Room.objects.filter(pk=ws.pk).values().get(), list(Seat.objects.filter(room=ws).values()),
              list(TaskAssignment.objects.filter(room=ws).values()))
    for method, path, body in [
        ("patch", f"/api/discussions/{ws.pk}", {"name": "Renamed", "colour": "blue"}),
        ("post", f"/api/discussions/{ws.pk}/tasks", {"title": "Another", "colour": "blue"}),
        ("patch", f"/api/discussions/{ws.pk}/tasks/{task['id']}", {"title": "Renamed", "version": task["version"],
                                                                         "colour": "blue"}),
        ("patch", f"/api/discussions/{ws.pk}/participants/{seat.pk}", {"personaId": None, "version": seat.version,
                                                                         "colour": "blue"}),
    ]:
        answer = getattr(owner_api, method)(path, body)
        assert answer.status_code == 400, (path, answer.json())
        assert list(answer.json()["error"]["details"]) == ["colour"], answer.json()
    assert before == (Room.objects.filter(pk=ws.pk).values().get(), list(Seat.objects.filter(room=ws).values()),
                      list(TaskAssignment.objects.filter(room=ws).values()))
