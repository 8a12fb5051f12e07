"""Your facilitation runs, your chat accounts and (staff) everyone's ephemeral runs page like every other
list: ``?page=``, ``?pageSize=`` (1 to 100, default 100), the same ``meta``, 400 for a bad value, and the
schema and the guide say so. They answered without ``meta`` and ignored (or took any value of) ``page`` and
``pageSize``."""
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from rooms.models import ChatIdentity, FacilitationRun, Room

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
META = {"page", "pageSize", "total", "totalPages", "hasNext", "hasPrevious"}
LISTS = {"runs": "/api/me/facilitation-runs", "identities": "/api/me/chat-identities",
         "ephemeral": "/api/ephemeral-runs"}
# who reads each list: one's own lists their owner, the ephemeral runs of everyone staff
READER = {"runs": "owner", "identities": "owner", "ephemeral": "staff"}


def _run(owner, i: int, hours: int, **extra) -> None:
    now = timezone.now()
    room = Room.objects.create(name=f"Run {i}", topic="Roles", kind=Room.Kind.FACILITATION, owner=owner)
    FacilitationRun.objects.create(room=room, pattern="list", slots={"min": 1}, artifact={"items": []},
                                   deadline=now + timedelta(hours=1), ttl_hours=24, join_code=f"code-{i}",
                                   expires_at=now + timedelta(hours=hours), **extra)


def _rows(name, people) -> list[int]:
    """Five rows of the list, made here, as the list orders them (their ids)."""
    owner = people["owner"]
    if name == "ephemeral":  # several owners' runs; a persistent run is not in the list
        for i in range(5):
            _run(people["owner" if i % 2 else "other"], i, 5 - i)
        _run(owner, 9, 1, origin=FacilitationRun.Origin.PERSISTENT)
        return list(FacilitationRun.objects.filter(origin="ephemeral").order_by("expires_at", "id")
                    .values_list("room_id", flat=True))
    if name == "runs":
        for i in range(5):
            _run(owner, i, 5 - i)
        return list(FacilitationRun.objects.filter(room__owner=owner).order_by("expires_at", "id")
                    .values_list("room_id", flat=True))
    for i in range(5):
        ChatIdentity.objects.create(platform=("telegram", "teams")[i % 2], external_id=f"{900 + i}", name=f"Me {i}", user=owner)
    return list(ChatIdentity.objects.filter(user=owner).order_by("platform", "id").values_list("pk", flat=True))


def _keys(name, body) -> list[int]:
    return [row["id" if name == "identities" else "discussionId"] for row in body["data"]]


@pytest.mark.parametrize("name", list(LISTS))
def test_the_list_pages_like_the_others(clients, people, name):
    keys, url, api = _rows(name, people), LISTS[name], clients[READER[name]]
    first = api.get(url, {"pageSize": 2})
    assert first.status_code == 200, first.json()
    body = first.json()
    assert META <= set(body["meta"]), body.get("meta")
    assert _keys(name, body) == keys[:2]
    assert body["meta"].items() >= {"page": 1, "pageSize": 2, "total": 5, "totalPages": 3, "hasNext": True,
                                    "hasPrevious": False}.items()
    assert _keys(name, api.get(url, {"pageSize": 2, "page": 3}).json()) == keys[4:]
    past = api.get(url, {"pageSize": 2, "page": 99}).json()
    assert past["data"] == [] and past["meta"]["total"] == 5
    everything = api.get(url).json()
    assert _keys(name, everything) == keys and everything["meta"]["pageSize"] == 100


@pytest.mark.parametrize("name", list(LISTS))
@pytest.mark.parametrize("param, value", [("page", "0"), ("page", "two"), ("page", "1000001"), ("pageSize", "0"),
                                          ("pageSize", "101"), ("pageSize", "many")])
def test_a_bad_page_value_is_a_clear_400(clients, name, param, value):
    answer = clients[READER[name]].get(LISTS[name], {param: value})
    assert answer.status_code == 400, answer.json()
    error = answer.json()["error"]
    assert error["code"] == "validation_error" and list(error["details"]) == [param], error


def test_each_list_documents_its_paging(owner_api):
    schema = owner_api.get("/api/schema").json()
    for route in LISTS.values():
        operation = schema["paths"][route]["get"]
        params = {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "query"}
        assert params["pageSize"]["schema"]["maximum"] == 100 and "default 100" in params["pageSize"]["description"]
        assert params["page"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 1_000_000}
        assert "400" in operation["responses"], route
        envelope = operation["responses"]["200"]["content"]["application/json"]["schema"]
        component = schema["components"]["schemas"][envelope["$ref"].rsplit("/", 1)[1]]
        assert "meta" in component["properties"], route
    text = " ".join(DOCS.read_text().split())
    assert "`/api/me/facilitation-runs`, `/api/me/chat-identities`, `/api/ephemeral-runs` (staff)" in text
    assert "1 to 1,000,000" in text  # the guide states the largest page number


def test_the_ephemeral_runs_stay_staff_only_whatever_the_page(clients, people):
    _rows("ephemeral", people)
    for params in ({}, {"page": "two"}, {"pageSize": 2}):
        answer = clients["owner"].get(LISTS["ephemeral"], params)
        assert answer.status_code == 403 and "data" not in answer.json(), params
