"""Pages hand the browser the names it shows: the socket names from rooms.events.types, run states
in the chats' words."""
import json
import re

import pytest

from facilitation.goals.texts import STATE_WORDS
from rooms.events.types import client_names
from rooms.models import Room
from tests.factories import make_discussion, make_user


@pytest.mark.django_db
def test_room_page_renders_the_event_and_command_names(client, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    owner = make_user("pageowner")
    room = make_discussion(owner)
    client.force_login(owner)
    html = client.get(f"/discussions/{room.pk}/").content.decode()
    found = re.search(r'<script id="socket-names" type="application/json">(.*?)</script>', html, re.S)
    assert found, "the room page must carry the socket names"
    assert json.loads(found.group(1)) == client_names()


def _page_data(html: str) -> dict:
    found = re.search(r'<script id="page-data" type="application/json">(.*?)</script>', html, re.S)
    assert found, "the page must carry its page data"
    return json.loads(found.group(1))


@pytest.mark.django_db
def test_pages_that_show_run_states_use_the_words_of_the_chats(client, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    owner = make_user("runpageowner")
    discussion, run = make_discussion(owner), make_discussion(owner)
    Room.objects.filter(pk=run.pk).update(kind=Room.Kind.FACILITATION)
    client.force_login(owner)
    assert _page_data(client.get(f"/discussions/{run.pk}/").content.decode())["runStates"] == STATE_WORDS
    assert _page_data(client.get(f"/discussions/{discussion.pk}/").content.decode())["runStates"] == {}
    assert _page_data(client.get("/").content.decode())["runStates"] == STATE_WORDS
