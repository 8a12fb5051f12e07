"""One description per resource: the OpenAPI schema's fields are the keys the answers and events carry.

Each resource is one serializer that renders it and documents it, so a field added to the
answer but not to the schema (or the other way round) fails here, for a real object.
"""
import pytest

from rooms.models import Narrative, RoomEvent
from rooms.serializers import Out, TurnOut
from tests.api.conftest import create_body
from tests.workspace.helpers import make_workspace


@pytest.fixture
def schema(db):
    from tests.api.conftest import Api

    return Api().get("/api/schema").json()["components"]["schemas"]


def fields(schema, component: str) -> set[str]:
    return set(schema[component]["properties"])


def same(schema, component: str, obj: dict, optional=()) -> None:
    """``obj`` has exactly the component's fields (those in ``optional`` may be absent)."""
    documented = fields(schema, component)
    assert set(obj) - set(optional) == documented - set(optional), (component, sorted(set(obj) ^ documented))
    assert set(schema[component].get("required", [])) <= set(obj), component


def test_discussion_participant_moderator_member_and_agent_answers_match_the_schema(schema, owner_api, catalog):
    created = owner_api.post("/api/discussions", create_body(catalog))
    assert created.status_code == 201, created.json()
    data = created.json()["data"]
    same(schema, "DiscussionOut", data, optional=("run", "joinCode"))  # a facilitation run's keys (test_facilitation_schema)
    same(schema, "ParticipantOut", data["participants"][0])
    same(schema, "ModeratorOut", data["moderator"])
    same(schema, "UsageOut", data["usage"])
    same(schema, "AnalyticsOut", data["analytics"])
    same(schema, "ConsensusOut", data["consensus"])
    same(schema, "DiscussionSummaryOut", owner_api.get("/api/discussions").json()["data"][0])

    agent = owner_api.get(f"/api/agents/{catalog['ada'].pk}").json()["data"]
    same(schema, "AgentOut", agent)
    same(schema, "RefOut", agent["persona"])
    same(schema, "PersonaOut", owner_api.get("/api/personas").json()["data"][0])
    same(schema, "RoleOut", owner_api.get("/api/roles").json()["data"][0])

    from tests.factories import make_user

    make_user("member")
    member = owner_api.post(f"/api/discussions/{data['id']}/members", {"username": "member"}).json()["data"]
    same(schema, "MemberOut", member)


def test_turn_answers_and_turn_events_match_the_schema(schema, owner_api, catalog):
    room_id = owner_api.post("/api/discussions", create_body(catalog)).json()["data"]["id"]
    assert owner_api.post(f"/api/discussions/{room_id}/start").status_code == 200
    comment = owner_api.post(f"/api/discussions/{room_id}/comments", {"content": "VOTE: READY ship it"})
    assert comment.status_code == 201, comment.json()
    same(schema, "TurnOut", comment.json()["data"])
    same(schema, "SpeakerOut", comment.json()["data"]["speaker"])
    turns = owner_api.get(f"/api/discussions/{room_id}/turns").json()["data"]
    assert turns
    for turn in turns:
        same(schema, "TurnOut", turn)
    pushed = [e.payload["turn"] for e in RoomEvent.objects.filter(room_id=room_id, type="discussion:turn")]
    assert pushed
    for turn in pushed:  # the socket's turn is the REST turn
        same(schema, "TurnOut", turn)
        same(schema, "SpeakerOut", turn["speaker"])


def test_workspace_answers_match_the_schema(schema, clients, people):
    room = make_workspace(people["owner"])
    api, url = clients["owner"], f"/api/discussions/{room.pk}"
    assert api.post(f"{url}/start").status_code == 200
    obs = api.post(f"{url}/observations", {"type": "question", "content": "Which queue?"}).json()["data"]
    same(schema, "ObservationOut", obs)
    same(schema, "AuthorOut", obs["author"])
    same(schema, "TaskOut", api.post(f"{url}/tasks", {"title": "Pick a queue"}).json()["data"])
    ended = api.post(f"{url}/rounds/end").json()["data"]
    same(schema, "RoundOut", ended)
    narrative = Narrative.objects.create(room=room, round=1, content="Queue chosen.", generated_content="Queue chosen.")
    edited = api.patch(f"{url}/narratives/{narrative.pk}", {"content": "Kafka chosen.", "version": 1})
    assert edited.status_code == 200, edited.json()
    same(schema, "NarrativeOut", edited.json()["data"])
    narrated = [r for r in api.get(f"{url}/rounds").json()["data"] if r["narrative"]]
    assert narrated
    same(schema, "RoundOut", narrated[0])
    same(schema, "NarrativeOut", narrated[0]["narrative"])
    seat = api.get(url).json()["data"]["participants"][0]
    swapped = api.patch(f"{url}/participants/{seat['seatId']}", {"roleId": None, "version": seat["version"]})
    assert swapped.status_code == 200, swapped.json()
    same(schema, "WorkspaceSeatOut", swapped.json()["data"])
    same(schema, "InvocationOut", api.get(f"{url}/invocations").json()["data"][0])


def test_every_resource_serializer_renders_the_fields_it_declares():
    """``Out.render`` and DRF's ``.data`` are the same rendering, keyed by the declared fields."""
    from facilitation.api import schemas  # noqa: F401  (loads the API's resources)
    from facilitation.workspace import serializers  # noqa: F401
    from rooms.serializers import wire_name

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    outs = list(subclasses(Out))
    assert {"TurnOut", "DiscussionOut", "AgentOut", "ObservationOut", "TaskOut"} <= {c.__name__ for c in outs}
    for cls in outs:
        assert [key for key, *_ in cls._compiled()] == [wire_name(name) for name in cls().fields], cls
    assert TurnOut.render.__func__ is Out.render.__func__


def test_the_event_schemas_turn_and_speaker_name_the_serializers_fields():
    """The sockets' typed shapes (``rooms.events.schemas``) promise the same keys the serializer renders."""
    from rooms.events.schemas import Speaker, Turn
    from rooms.serializers import SpeakerOut, wire_name

    assert set(Turn.__annotations__) == {wire_name(name) for name in TurnOut().fields}
    assert set(Speaker.__annotations__) == {wire_name(name) for name in SpeakerOut().fields}


def test_a_json_list_field_renders_null_as_an_empty_list_and_never_hands_out_the_model_s_own_list():
    from types import SimpleNamespace

    from rest_framework import serializers

    from rooms.serializers import ListOf

    class TagsOut(Out):
        tags = ListOf(child=serializers.CharField())

    own = ["a", "b"]
    rendered = TagsOut.render(SimpleNamespace(tags=own))
    assert rendered == {"tags": ["a", "b"]} and rendered["tags"] is not own
    assert TagsOut.render(SimpleNamespace(tags=None)) == {"tags": []}
