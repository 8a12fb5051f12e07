"""REST for structured deliberation: creating with a template, votes, advancing phases."""
import pytest

from rooms.models import Room, RoomMember
from tests.api.conftest import Api, create_body
from tests.facilitation.discussions.test_phases import discussion

pytestmark = pytest.mark.django_db


def test_advance_over_rest_is_for_the_owner_and_409_without_phases(people, catalog):
    room = discussion(people["owner"], template="feature")
    member = Api(people["viewer"])
    RoomMember.objects.create(room=room, user=people["viewer"], access="viewer")
    assert member.post(f"/api/discussions/{room.pk}/advance").status_code == 403
    assert Api(people["other"]).post(f"/api/discussions/{room.pk}/advance").status_code == 404
    answer = Api(people["owner"]).post(f"/api/discussions/{room.pk}/advance")
    assert answer.status_code == 200 and answer.json()["data"]["phase"] == "shape"
    votes = member.get(f"/api/discussions/{room.pk}/votes").json()["data"]
    assert votes["phase"] == "shape" and votes["tally"] == {"ready": 0, "changes": 0, "reject": 0}
    plain = discussion(people["owner"])
    conflict = Api(people["owner"]).post(f"/api/discussions/{plain.pk}/advance")
    assert conflict.status_code == 409 and Room.objects.get(pk=plain.pk).phase == ""
    assert conflict.json()["error"]["code"] == "no_phases"


def test_a_draft_does_not_skip_its_first_phase(people, catalog):
    from tests.factories import make_discussion
    from facilitation.actions.phases import deliberation_settings

    draft = make_discussion(people["owner"], deliberation=deliberation_settings("feature", None))
    before = Room.objects.get(pk=draft.pk).phase
    refused = Api(people["owner"]).post(f"/api/discussions/{draft.pk}/advance")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "invalid_transition"
    assert "not started" in refused.json()["error"]["message"]
    assert Room.objects.get(pk=draft.pk).phase == before == "explore"


def test_create_takes_template_consensus_and_max_parallel(people, catalog):
    api = Api(people["owner"])
    body = create_body(catalog, template="feature", consensus={"threshold": 0.8, "humanRequired": True}, maxParallel=2)
    made = api.post("/api/discussions", body)
    assert made.status_code == 201, made.content
    data = made.json()["data"]
    assert data["template"] == "feature" and data["phase"] == "explore" and data["maxParallel"] == 2
    assert data["consensus"] == {"threshold": 0.8, "rejectBlocks": True, "humanRequired": True}
    count = Room.objects.count()
    for bad in ({"template": "nope"}, {"consensus": {"threshold": 1.2}}, {"maxParallel": 0}, {"maxParallel": 4}):
        refused = api.post("/api/discussions", create_body(catalog, **bad))
        assert refused.status_code == 400, bad
    assert Room.objects.count() == count


def _export(api, room_id):
    answer = api.get(f"/api/discussions/{room_id}/export", {"format": "md"})
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/markdown")
    return answer.content.decode()


def test_rest_export_is_the_discussion_file_and_survives_import_then_export_unchanged(people, catalog):
    from facilitation.actions.lifecycle import do_stop_discussion
    from facilitation.discussions.file_io import discussion_file
    from tests.facilitation.discussions.test_phases import say, speakers

    owner = people["owner"]
    room = discussion(owner, template="feature", consensus={"threshold": 0.5, "humanRequired": True})
    a, b, _ = speakers(room)
    say(room, a, "We need it.\nQ: Who asked for this?")
    Api(owner).post(f"/api/discussions/{room.pk}/advance")
    say(room, b, "### Turn 9 · not a heading\n---\nVOTE: READY")
    do_stop_discussion(Room.objects.get(pk=room.pk))
    api = Api(owner)
    first = _export(api, room.pk)
    assert first == discussion_file(Room.objects.get(pk=room.pk))  # the same text as the CLI writes
    assert 'template: "feature"' in first and 'phase: "shape"' in first and '"human_required": true' in first
    created = api.client.post("/api/discussions/import", first.encode(), content_type="text/markdown")
    assert created.status_code == 201, created.content
    copy = Room.objects.get(pk=created.json()["data"]["id"])
    assert copy.pk != room.pk and (copy.template, copy.phase) == ("feature", "shape")
    assert copy.consensus == Room.objects.get(pk=room.pk).consensus
    assert _export(api, copy.pk) == first


def test_import_refuses_an_unknown_template_or_phase_and_writes_nothing(people, catalog):
    from facilitation.actions.lifecycle import do_stop_discussion

    owner = people["owner"]
    room = discussion(owner, template="adr")
    do_stop_discussion(Room.objects.get(pk=room.pk))
    text = _export(Api(owner), room.pk)
    count = Room.objects.count()
    for bad in (text.replace('template: "adr"', 'template: "waterfall"'), text.replace('phase: "context"', 'phase: "nope"'),
                text.replace('"threshold": 0.67', '"threshold": 3')):
        assert bad != text
        refused = Api(owner).client.post("/api/discussions/import", bad.encode(), content_type="text/markdown")
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "malformed_file", refused.content
    assert Room.objects.count() == count


def test_a_comment_over_rest_votes_and_moves_the_phase_with_human_required(people, catalog):
    from tests.facilitation.discussions.test_phases import say, speakers

    owner = people["owner"]
    room = discussion(owner, template="feature", consensus={"humanRequired": True})
    RoomMember.objects.create(room=room, user=people["participant"], access="participant")
    RoomMember.objects.create(room=room, user=people["viewer"], access="viewer")
    Api(owner).post(f"/api/discussions/{room.pk}/advance")
    for seat in speakers(room):
        say(room, seat, "VOTE: READY")
    votes = Api(owner).get(f"/api/discussions/{room.pk}/votes").json()["data"]
    assert votes["tally"]["ready"] == 3 and votes["consensus"]["reached"] is False
    refused = Api(people["viewer"]).post(f"/api/discussions/{room.pk}/comments", {"content": "VOTE: READY"})
    assert refused.status_code == 403 and Room.objects.get(pk=room.pk).phase == "shape"
    said = Api(people["participant"]).post(f"/api/discussions/{room.pk}/comments", {"content": "Good to go.\nVOTE: READY"})
    assert said.status_code == 201 and said.json()["data"]["speaker"]["kind"] == "human"
    # The transcript names a person's role as the comment's own answer and its live event do.
    assert said.json()["data"]["speaker"]["role"] == "participant"
    listed = Api(owner).get(f"/api/discussions/{room.pk}/turns?limit=1000").json()["data"]
    assert [t["speaker"]["role"] for t in listed if t["speaker"]["kind"] == "human"] == ["participant"]
    assert said.json()["data"]["markers"][0]["value"] == "READY"
    assert Room.objects.get(pk=room.pk).phase == "commit"
    assert Api(owner).get(f"/api/discussions/{room.pk}/votes").json()["data"]["votes"] == []  # a new ballot


def test_the_votes_document_lists_every_phase_change_where_it_happened(people, catalog):
    from rooms.models import RoomEvent

    owner = people["owner"]
    room = discussion(owner, template="feature")
    assert Api(owner).get(f"/api/discussions/{room.pk}/votes").json()["data"]["history"] == []
    Api(owner).post(f"/api/discussions/{room.pk}/advance")
    Api(owner).post(f"/api/discussions/{room.pk}/advance")
    history = Api(owner).get(f"/api/discussions/{room.pk}/votes").json()["data"]["history"]
    events = list(RoomEvent.objects.filter(room=room, type="discussion:phase").order_by("seq").values_list("seq", flat=True))
    assert history == [{"phase": "shape", "seq": events[0]}, {"phase": "commit", "seq": events[1]}]


def test_the_votes_counts_say_what_the_verdict_counts(people, catalog):
    owner = people["owner"]
    room = discussion(owner, template="feature")
    RoomMember.objects.create(room=room, user=people["participant"], access="participant")
    Api(owner).post(f"/api/discussions/{room.pk}/advance")
    said = Api(people["participant"]).post(f"/api/discussions/{room.pk}/comments", {"content": "Fine by me.\nVOTE: READY"})
    assert said.status_code == 201
    votes = Api(owner).get(f"/api/discussions/{room.pk}/votes").json()["data"]
    # Three speaking seats that have not voted, and one person who has: four voters, one of whom voted.
    assert (votes["eligible"], votes["voted"]) == (4, 1)
    assert votes["consensus"]["reason"].startswith("1 of 4 voters") and votes["consensus"]["reached"] is False


@pytest.mark.parametrize("body, content_type", [
    ('{"content": ', "application/json"),  # malformed JSON
    ("{}", "application/json"),  # no content
    ('{"content": "   "}', "application/json"),
    ('{"content": "VOTE: READY"}', "text/plain"),  # not JSON
])
def test_a_viewer_who_comments_is_refused_whatever_the_body(people, catalog, body, content_type):
    from rooms.models import Observation

    room = discussion(people["owner"], template="feature")
    RoomMember.objects.create(room=room, user=people["viewer"], access="viewer")
    before = Observation.objects.filter(room=room).count()
    refused = Api(people["viewer"]).client.post(f"/api/discussions/{room.pk}/comments", body, content_type=content_type)
    assert refused.status_code == 403, refused.content
    assert refused.json()["error"]["code"] == "forbidden"
    assert Observation.objects.filter(room=room).count() == before
    # A stranger still learns nothing, and a participant's empty comment is still a 400.
    assert Api(people["other"]).client.post(f"/api/discussions/{room.pk}/comments", body,
                                            content_type=content_type).status_code == 404
    RoomMember.objects.create(room=room, user=people["participant"], access="participant")
    assert Api(people["participant"]).post(f"/api/discussions/{room.pk}/comments", {}).status_code == 400
