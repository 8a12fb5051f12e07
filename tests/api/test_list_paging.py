"""The lists that were not paged (API tokens, members, chat links, deliveries, the invocation log) page
like the others: ``?page=`` and ``?pageSize=``, the same ``meta``, 400 for a bad value, and the schema
and the guide say so."""
from pathlib import Path

import pytest

from rooms.models import ApiToken, Chat, ChatLink, Delivery, Invocation, RoomMember
from rooms.tokens import live_tokens
from tests.factories import make_token, make_user

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
META = {"page", "pageSize", "total", "totalPages", "hasNext", "hasPrevious"}

# name -> (route in the schema, default page size, largest page size, older name of pageSize)
LISTS = {
    "tokens": ("/api/me/tokens", 100, 100, None),
    "members": ("/api/discussions/{id}/members", 100, 100, None),
    "links": ("/api/discussions/{id}/links", 100, 100, None),
    "deliveries": ("/api/discussions/{id}/deliveries", 200, 1000, "limit"),
    "invocations": ("/api/discussions/{id}/invocations", 200, 1000, "limit"),
}


def _rows(name, room, owner) -> tuple[str, list]:
    """Five or more rows of the list (made here), and their keys in the list's order."""
    url = LISTS[name][0].replace("{id}", str(room.pk))
    if name == "tokens":
        for _ in range(4):
            make_token(owner)
        return url, list(live_tokens().filter(user=owner).order_by("-created_at", "-id").values_list("pk", flat=True))
    if name == "members":
        for i in range(3):
            RoomMember.objects.create(room=room, user=make_user(f"reader{i}"), access=RoomMember.Access.VIEWER)
        return url, list(RoomMember.objects.filter(room=room).order_by("added_at", "id").values_list("user__username", flat=True))
    if name == "links":
        for i in range(5):
            ChatLink.objects.create(chat=Chat.objects.create(platform="telegram", external_id=f"-{i + 1}", title=f"Team {i}"), room=room)
        return url, list(ChatLink.objects.filter(room=room, active=True).order_by("id").values_list("pk", flat=True))
    if name == "deliveries":
        for i in range(5):
            Delivery.objects.create(room=room, kind="post", platform="telegram", recipient=f"Team {i}", text="hi")
        return url, list(Delivery.objects.filter(room=room).order_by("-id").values_list("pk", flat=True))
    for i in range(5):
        Invocation.objects.create(room=room, component="manager.edit_narrative", correlation_id=f"c{i}")
    return url, list(Invocation.objects.filter(room=room).order_by("id").values_list("pk", flat=True))


def _keys(name, body) -> list:
    return [row["username"] if name == "members" else row["id"] for row in body["data"]]


@pytest.mark.parametrize("name", list(LISTS))
def test_the_list_pages_like_the_others(owner_api, people, room, name):
    url, keys = _rows(name, room, people["owner"])
    total = len(keys)
    assert total >= 5
    first = owner_api.get(url, {"pageSize": 2})
    assert first.status_code == 200, first.json()
    body = first.json()
    assert META <= set(body["meta"]), body.get("meta")
    assert _keys(name, body) == keys[:2]
    assert body["meta"].items() >= {"page": 1, "pageSize": 2, "total": total, "totalPages": (total + 1) // 2,
                                    "hasNext": True, "hasPrevious": False}.items()
    second = owner_api.get(url, {"pageSize": 2, "page": 2}).json()
    assert _keys(name, second) == keys[2:4] and second["meta"]["hasPrevious"] is True
    last = owner_api.get(url, {"pageSize": 2, "page": (total + 1) // 2}).json()
    assert _keys(name, last) == keys[((total + 1) // 2 - 1) * 2:] and last["meta"]["hasNext"] is False
    past = owner_api.get(url, {"pageSize": 2, "page": 99}).json()
    assert past["data"] == [] and past["meta"]["total"] == total
    everything = owner_api.get(url).json()
    assert _keys(name, everything) == keys and everything["meta"]["pageSize"] == LISTS[name][1]


@pytest.mark.parametrize("name", list(LISTS))
@pytest.mark.parametrize("param, value", [("page", "0"), ("page", "two"), ("page", "-1"), ("pageSize", "0"),
                                          ("pageSize", "many"), ("pageSize", "max+1"),
                                          ("page", "1_0"), ("page", "\uff12"), ("pageSize", "1" * 5000)])
def test_a_bad_page_value_is_a_clear_400(owner_api, room, name, param, value):
    url = LISTS[name][0].replace("{id}", str(room.pk))
    if value == "max+1":
        value = str(LISTS[name][2] + 1)
    answer = owner_api.get(url, {param: value})
    assert answer.status_code == 400, answer.json()
    error = answer.json()["error"]
    assert error["code"] == "validation_error" and list(error["details"]) == [param], error


@pytest.mark.parametrize("name", ["deliveries", "invocations"])
def test_limit_still_sets_the_length_of_the_page(owner_api, people, room, name):
    """Callers written before the log was paged sent ``limit``: it is the page size when pageSize is not sent."""
    url, keys = _rows(name, room, people["owner"])
    body = owner_api.get(url, {"limit": 2}).json()
    assert _keys(name, body) == keys[:2] and body["meta"]["pageSize"] == 2 and body["meta"]["hasNext"] is True
    assert _keys(name, owner_api.get(url, {"limit": 2, "page": 2}).json()) == keys[2:4]
    assert _keys(name, owner_api.get(url, {"limit": 2, "pageSize": 3}).json()) == keys[:3]  # pageSize wins
    assert owner_api.get(url, {"limit": 1000}).status_code == 200
    assert owner_api.get(url, {"limit": 1001}).json()["error"]["details"] == {"limit": ["Must be from 1 to 1000."]}


def test_the_invocation_log_pages_after_its_filters(owner_api, people, room):
    url, keys = _rows("invocations", room, people["owner"])
    body = owner_api.get(url, {"afterId": keys[1], "pageSize": 2, "page": 2}).json()
    assert _keys("invocations", body) == keys[4:6]
    assert body["meta"]["total"] == len(keys) - 2 and body["meta"]["count"] == len(body["data"])
    chain = owner_api.get(url, {"correlationId": "c3"}).json()
    assert [r["correlationId"] for r in chain["data"]] == ["c3"] and chain["meta"]["total"] == 1


def test_each_list_documents_its_paging(owner_api):
    schema = owner_api.get("/api/schema").json()
    components = schema["components"]["schemas"]
    for name, (route, default, maximum, alias) in LISTS.items():
        operation = schema["paths"][route]["get"]
        params = {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "query"}
        assert {"page", "pageSize"} <= set(params), name
        assert params["pageSize"]["schema"]["maximum"] == maximum and f"default {default}" in params["pageSize"]["description"]
        assert params["page"]["schema"]["minimum"] == 1
        if alias:
            assert params[alias]["schema"]["maximum"] == maximum
        assert "400" in operation["responses"], name
        envelope = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        meta = components[envelope]["properties"]["meta"]
        meta = components[meta["$ref"].rsplit("/", 1)[1]] if "$ref" in meta else meta
        assert META <= set(meta["properties"]) and "meta" in components[envelope]["required"], name


def test_the_guide_says_these_lists_are_paged():
    text = " ".join(DOCS.read_text().split())
    paging = text.split("- **Pagination**", 1)[1].split("- **", 1)[0]
    for name, (route, default, maximum, alias) in LISTS.items():
        assert route.removeprefix("/api") in paging, name
    assert "default 20" in paging and "by 100 by default" in paging and "by 200 by default, up to 1000" in paging
    assert "`limit`" in paging and "400 `validation_error`" in paging
    assert all(f"`{field}`" in paging for field in META)


def test_a_token_of_another_user_is_not_counted(clients, people):
    make_token(people["other"])
    meta = clients["owner"].get("/api/me/tokens").json()["meta"]
    assert meta["total"] == ApiToken.objects.filter(user=people["owner"]).count() == 1


def test_has_previous_says_whether_rows_come_before_the_page(owner_api, people, room):
    """``hasNext`` is true when rows come after the page, ``hasPrevious`` when rows come before it: past the end
    of a list with rows, the rows are before the page; an empty list has none before any page."""
    url, keys = _rows("tokens", room, people["owner"])
    past = owner_api.get(url, {"pageSize": 2, "page": 99}).json()["meta"]
    assert past["hasPrevious"] is True and past["hasNext"] is False and past["total"] == len(keys)
    assert owner_api.get(url, {"pageSize": 2}).json()["meta"]["hasPrevious"] is False
    links = LISTS["links"][0].replace("{id}", str(room.pk))
    for page in (1, 2, 99):
        empty = owner_api.get(links, {"page": page}).json()
        assert empty["data"] == [] and empty["meta"]["total"] == 0
        assert empty["meta"]["hasPrevious"] is False and empty["meta"]["hasNext"] is False
    schema = owner_api.get("/api/schema").json()["components"]["schemas"]
    assert "before this page" in schema["PageMetaOut"]["properties"]["hasPrevious"]["description"]
    paging = " ".join(DOCS.read_text().split()).split("- **Pagination**", 1)[1].split("- **", 1)[0]
    assert "`hasPrevious` is true when rows come before the page" in paging
