"""A discussion's file: export, import, export again gives the same transcript; bad files write nothing."""
import pytest

from facilitation.actions.lifecycle import do_start_discussion
from facilitation.discussions.file_io import discussion_file, do_import_discussion
from facilitation.management.inline import drive_inline
from facilitation.runs.scheduling import inline
from rooms.errors import ValidationFailed
from rooms.models import Observation, Room
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db


def _concluded(owner):
    room = make_discussion(owner, max_rounds=3)
    with inline():
        do_start_discussion(room)
    return drive_inline(room.pk)


def _turns(text):
    return text[text.index("### Turn"):]


def test_export_import_export_keeps_the_transcript_and_header():
    owner = make_user("owner")
    room = _concluded(owner)
    assert room.status == "concluded"
    first = discussion_file(room)
    imported = do_import_discussion(owner, first)
    assert imported.pk != room.pk and imported.status == "concluded"
    again = discussion_file(imported)
    assert _turns(again) == _turns(first)
    assert again.replace(f"# {imported.name}", "") == first.replace(f"# {room.name}", "")
    assert Observation.objects.filter(room=imported).count() == Observation.objects.filter(room=room).count()
    # markers are parsed again from the text
    original = list(Observation.objects.filter(room=room, kind="contribution").values_list("markers", flat=True))
    copied = list(Observation.objects.filter(room=imported, kind="contribution").values_list("markers", flat=True))
    assert copied == original


@pytest.mark.parametrize("mutate, code", [
    (lambda t: t.replace("<!-- convene discussion file v1 -->", "# hi"), "malformed_file"),
    (lambda t: t.replace('maxRounds: 3', 'maxRounds: three'), "malformed_file"),
    (lambda t: t.replace('"alias": "', '"alias": "nobody-', 1).replace('"name": "', '"name": "Nobody ', 1), "unknown_participant"),
])
def test_a_bad_file_is_refused_and_writes_nothing(mutate, code):
    owner = make_user("owner")
    text = mutate(discussion_file(_concluded(owner)))
    rooms = Room.objects.count()
    with pytest.raises(ValidationFailed) as caught:
        do_import_discussion(owner, text)
    assert caught.value.code == code
    assert Room.objects.count() == rooms


def test_import_over_rest_creates_the_discussion_and_a_bad_file_is_400_naming_the_line(client):
    from rest_framework.test import APIClient

    from tests.factories import make_token

    owner = make_user("owner")
    text = discussion_file(_concluded(owner))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {make_token(owner)}")
    created = api.post("/api/discussions/import", text.encode(), content_type="text/markdown")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["success"] and body["data"]["status"] == "concluded"
    rooms = Room.objects.count()
    bad = api.post("/api/discussions/import", text.replace("maxRounds: 3", "maxRounds: x").encode(), content_type="text/markdown")
    assert bad.status_code == 400 and bad.json()["error"]["details"]["line"] == 6
    assert Room.objects.count() == rooms
    anonymous = APIClient().post("/api/discussions/import", text.encode(), content_type="text/markdown")
    assert anonymous.status_code in (401, 403) and Room.objects.count() == rooms


def test_a_rehearsal_exported_and_imported_is_still_marked_as_a_rehearsal(client):
    """A discussion the offline rehearsal model ran: its file marks the turns that model wrote, and the discussion
    imported from it is a rehearsal where the room says so (the discussion's ``rehearsal``, each turn's) and in its
    own export; a turn nobody marked stays unmarked."""
    owner = make_user("owner")
    room = _concluded(owner)
    marked = list(Observation.objects.filter(room=room).order_by("seq").values_list("provider", flat=True))
    assert "rehearsal" in marked
    Observation.objects.filter(room=room, seq=Observation.objects.filter(room=room).order_by("seq")[0].seq).update(
        provider="anthropic")  # one turn written by a model
    first = discussion_file(room)
    imported = do_import_discussion(owner, first)
    providers = list(Observation.objects.filter(room=imported).order_by("seq").values_list("provider", flat=True))
    assert providers == ["import" if p != "rehearsal" else "rehearsal"
                         for p in Observation.objects.filter(room=room).order_by("seq").values_list("provider", flat=True)]
    assert providers[0] == "import" and "rehearsal" in providers
    assert _turns(discussion_file(imported)) == _turns(first)
    client.force_login(owner)
    assert client.get(f"/api/discussions/{imported.pk}").json()["data"]["rehearsal"] is True
    turns = client.get(f"/api/discussions/{imported.pk}/turns").json()["data"]
    assert [t["rehearsal"] for t in turns] == [p == "rehearsal" for p in providers]
