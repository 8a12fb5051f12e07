"""Names people give things (discussions, agents, personas, roles, facilitation runs) are one line and hold nothing
invisible: a name is read in lists, headings and chats, and told apart from others by how it looks."""
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from rooms.models import Agent, Persona, Role, Room
from tests.api.conftest import create_body

BAD = {
    "a line break": ("Budget\nreview", "one line"),
    "a tab": ("Budget\treview", "one line"),
    "a zero-width space": ("Budget\u200breview", "invisible"),
    "a right-to-left override": ("\u202eweiver tegduB", "invisible"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_discussion_name_with_a_break_or_an_invisible_character_is_refused_and_nothing_is_made(owner_api, catalog, case):
    name, said = BAD[case]
    before = Room.objects.count()
    answer = owner_api.post("/api/discussions", create_body(catalog, name=name))
    assert answer.status_code == 400, answer.content
    assert said in answer.json()["error"]["details"]["name"][0]
    assert Room.objects.count() == before


def test_a_renamed_discussion_follows_the_same_rule(owner_api, room):
    answer = owner_api.patch(f"/api/discussions/{room.pk}", {"name": "New\u200bname"})
    assert answer.status_code == 400 and "invisible" in answer.json()["error"]["details"]["name"][0]
    assert Room.objects.get(pk=room.pk).name == room.name
    assert owner_api.patch(f"/api/discussions/{room.pk}", {"name": "Caf\u00e9 \u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 👩‍💻"}).status_code == 200


def test_a_name_of_joiners_alone_is_no_name(owner_api, catalog):
    answer = owner_api.post("/api/discussions", create_body(catalog, name="\u200d\u200c"))
    assert answer.status_code == 400 and "name" in answer.json()["error"]["details"]


@pytest.mark.parametrize("route,model", [("/api/agents", Agent), ("/api/personas", Persona), ("/api/roles", Role)])
def test_catalog_names_follow_the_rule(owner_api, route, model):
    before = model.objects.count()
    body = {"name": "Архитектор\u2060", "prompt": "Be precise.", "basePrompt": "Review.", "key": "x-architect"}
    answer = owner_api.post(route, body)
    assert answer.status_code == 400, answer.content
    assert "invisible" in answer.json()["error"]["details"]["name"][0]
    assert model.objects.count() == before


def test_a_facilitation_run_name_follows_the_rule(people, clients):
    people["owner"].user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    body = {"kind": "facilitation", "name": "Roles\nfor Q3", "topic": "Every role has one name", "pattern": "role_assignment",
            "slots": {"roles": ["Lead"]}, "deadline": (timezone.now() + timedelta(hours=2)).isoformat()}
    before = Room.objects.count()
    answer = clients["owner"].post("/api/discussions", body)
    assert answer.status_code == 400 and "one line" in answer.json()["error"]["details"]["name"][0]
    assert Room.objects.count() == before
