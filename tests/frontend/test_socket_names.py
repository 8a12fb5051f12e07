"""The room page hands the browser the socket names from rooms.events.types."""
import json
import re

import pytest

from rooms.events.types import client_names
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
