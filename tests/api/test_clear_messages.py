"""Error messages say what is wrong: a link id that is not a number is not a missing one, and sharing
without a username says the username is required (on ``username``), not that no such user exists."""
import pytest

from rooms.models import Chat, ChatLink, Invocation, RoomMember


@pytest.mark.parametrize("how, value", [*[("body", v) for v in ("abc", "1.5", "²", True, 2.0, [1])],
                                        *[("query", v) for v in ("abc", "1.5", "²", "1e3")]])
def test_a_link_id_that_is_not_a_whole_number_says_so(owner_api, room, how, value):
    url = f"/api/discussions/{room.pk}/links"
    answer = owner_api.delete(url, {"linkId": value}) if how == "body" else owner_api.delete(f"{url}?linkId={value}")
    assert answer.status_code == 400, answer.json()
    error = answer.json()["error"]
    assert error["message"] == "linkId must be a whole number." and list(error["details"]) == ["linkId"], error


@pytest.mark.parametrize("sent", [{}, {"linkId": None}, {"linkId": ""}])
def test_a_missing_link_id_is_required(owner_api, room, sent):
    answer = owner_api.delete(f"/api/discussions/{room.pk}/links", sent)
    assert answer.status_code == 400, answer.json()
    assert answer.json()["error"]["message"] == "linkId is required."


def test_a_whole_number_still_unlinks(owner_api, room):
    link = ChatLink.objects.create(chat=Chat.objects.create(platform="telegram", external_id="-7", title="Team"), room=room)
    assert owner_api.delete(f"/api/discussions/{room.pk}/links", {"linkId": str(link.pk)}).status_code == 200
    assert owner_api.delete(f"/api/discussions/{room.pk}/links", {"linkId": 10**6}).status_code == 404
    assert owner_api.delete(f"/api/discussions/{room.pk}/links?linkId=-3").status_code == 404  # a number, but no link


@pytest.mark.parametrize("sent, message", [
    ({"access": "viewer"}, "username is required."),
    ({"username": "", "access": "viewer"}, "username is required."),
    ({"username": "   "}, "username is required."),
    ({"username": None}, "username is required."),
    ({"username": 5}, "username must be text."),
    ({"username": "nobody-here"}, "No such user."),
])
def test_sharing_names_what_is_wrong_with_the_username(owner_api, room, sent, message):
    before = RoomMember.objects.count(), Invocation.objects.count()
    answer = owner_api.post(f"/api/discussions/{room.pk}/members", sent)
    assert answer.status_code == 400, answer.json()
    error = answer.json()["error"]
    assert error["message"] == message and list(error["details"]) == ["username"], error
    assert (RoomMember.objects.count(), Invocation.objects.count()) == before
