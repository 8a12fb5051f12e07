"""The run form takes its limits from the server's rules, not from copies of its own."""
import re

import pytest
from django.contrib.auth.models import Permission

from facilitation.goals.patterns import MAX_ITEMS
from rooms import limits
from tests.factories import make_user


def _form(client, settings, username: str) -> str:
    """The New facilitation run page as someone who may start runs sees it."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    owner = make_user(username)
    owner.user_permissions.add(Permission.objects.get(codename="start_facilitation_run"))
    client.force_login(owner)
    return client.get("/facilitation/new/").content.decode()


@pytest.mark.django_db
def test_the_list_minimum_goes_as_high_as_the_server_allows(client, settings):
    html = _form(client, settings, "runformowner")
    field = re.search(r'<input id="run-min"[^>]*>', html)
    assert field, "the form asks for a list's minimum"
    assert re.search(r'\bmin="1"', field.group(0)) and re.search(rf'\bmax="{MAX_ITEMS}"', field.group(0))


@pytest.mark.django_db
def test_the_goal_box_takes_as_many_characters_as_the_server_keeps(client, settings):
    html = _form(client, settings, "runformgoal")
    box = re.search(r'<textarea id="run-topic"[^>]*>', html)
    assert box and re.search(rf'\bmaxlength="{limits.TOPIC}"', box.group(0))
