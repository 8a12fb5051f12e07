"""A JSON body the server cannot read as text is 400 ``parse_error`` and writes nothing, on every route.

Two bodies used to be 500: one whose ``charset`` names a codec that is not a text encoding, and one
with an object key that is a lone surrogate escape (the answer naming the unknown field could not be
written).
"""
import pytest

from rooms.models import Role, Room


@pytest.mark.parametrize("charset", ["rot13", "base64", "hex", "zlib"])
def test_a_charset_that_is_not_a_text_encoding_is_400(owner_api, charset):
    before = Role.objects.count()
    response = owner_api.client.post("/api/roles", '{"name": "Scribe", "basePrompt": "Take notes."}',
                                     content_type=f"application/json; charset={charset}")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "parse_error"
    assert charset in error["message"]
    assert Role.objects.count() == before


def test_a_text_charset_still_reads(owner_api):
    body = '{"name": "Scribe", "basePrompt": "Take notes."}'.encode("utf-16")
    response = owner_api.client.generic("POST", "/api/roles", body, content_type="application/json; charset=utf-16")
    assert response.status_code == 201, response.content


@pytest.mark.parametrize("raw", [
    '{"\\ud800": 1}',
    '{"name": "Renamed", "\\udfff": 1}',
    '{"turnPolicy": {"\\ud800": 1}}',
    '{"participants": [{"\\udbff": true}]}',
])
def test_an_object_key_that_is_not_valid_unicode_is_400(owner_api, room, raw):
    response = owner_api.client.patch(f"/api/discussions/{room.pk}", raw, content_type="application/json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "parse_error"
    room.refresh_from_db()
    assert room.name != "Renamed"


def test_a_create_with_such_a_key_writes_nothing(owner_api, catalog):
    rooms, roles = Room.objects.count(), Role.objects.count()
    for path, raw in [("/api/discussions", '{"name": "N", "\\ud800": 1}'),
                      ("/api/roles", '{"name": "Scribe", "\\ud800": 1}')]:
        response = owner_api.client.post(path, raw, content_type="application/json")
        assert response.status_code == 400, (path, response.content)
        assert response.json()["error"]["code"] == "parse_error"
    assert (Room.objects.count(), Role.objects.count()) == (rooms, roles)


@pytest.mark.parametrize("raw", [
    '{"name": "Scribe", "basePrompt": "p", "x": 1e400}',
    '{"name": "Scribe", "basePrompt": "p", "x": [-1e309]}',
    '{"name": "Scribe", "basePrompt": "p", "x": NaN}',
])
def test_a_number_beyond_a_double_is_a_parse_error_like_nan(owner_api, raw):
    """``1e400`` used to read as infinity and reach the fields ("inf" is not a valid choice)."""
    before = Role.objects.count()
    response = owner_api.client.post("/api/roles", raw, content_type="application/json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "parse_error"
    assert "NaN" in error["message"] or "out of range" in error["message"]
    assert Role.objects.count() == before


def test_large_numbers_within_range_still_read(owner_api):
    response = owner_api.client.post("/api/personas", '{"key": "big", "name": "Big", "prompt": "p", "x": 1.5e300}',
                                     content_type="application/json")
    assert response.status_code == 201, response.content
