"""Fixtures for the REST API tests: the six kinds of caller and a JSON client per caller."""
import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from facilitation.runs.scheduling import inline
from rooms.models import RoomMember
from tests.factories import make_discussion, make_facilitator, make_participant, make_token, make_user


@pytest.fixture(autouse=True)
def _api_env(settings):
    """Steps are not enqueued (no broker in unit tests), rate-limit counters start at zero,
    and passwords hash fast (the default hasher costs ~0.3 s per user)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    with inline():
        yield
    cache.clear()


class Api:
    """A JSON client for /api/ with a token (or none): ``api.get("/api/discussions").json()``."""

    def __init__(self, user=None):
        self.user = user
        self.client = APIClient()
        if user is not None:
            self.client.credentials(HTTP_AUTHORIZATION=f"Token {make_token(user)}")

    def get(self, path, params=None, **extra):
        return self.client.get(path, params, **extra)

    def post(self, path, body=None, **extra):
        return self.client.post(path, body, format="json", **extra)

    def patch(self, path, body=None, **extra):
        return self.client.patch(path, body, format="json", **extra)

    def delete(self, path, body=None, **extra):
        return self.client.delete(path, body, format="json", **extra)

    def put(self, path, body=None, **extra):
        return self.client.put(path, body, format="json", **extra)


@pytest.fixture
def people(db):
    """owner, other (a stranger), viewer, participant (shared with), staff."""
    users = {
        "owner": make_user("owner"),
        "other": make_user("other"),
        "viewer": make_user("viewer"),
        "participant": make_user("participant"),
        "staff": make_user("staff", is_staff=True),
    }
    return users


@pytest.fixture
def room(people):
    room = make_discussion(people["owner"])
    RoomMember.objects.create(room=room, user=people["viewer"], access=RoomMember.Access.VIEWER)
    RoomMember.objects.create(room=room, user=people["participant"], access=RoomMember.Access.PARTICIPANT)
    return room


@pytest.fixture
def clients(people):
    """An ``Api`` per caller, plus ``anonymous``."""
    return {"anonymous": Api(), **{name: Api(user) for name, user in people.items()}}


@pytest.fixture
def owner_api(clients):
    return clients["owner"]


@pytest.fixture
def catalog(db):
    """A facilitator and three participant agents, all built-in."""
    return {
        "chair": make_facilitator("Chair API", key="chair-api"),
        "ada": make_participant("Ada", alias="ada"),
        "bob": make_participant("Bob", alias="bob"),
        "cyd": make_participant("Cyd", alias="cyd"),
    }


def create_body(catalog, **overrides):
    body = {
        "name": "Caching strategy review",
        "topic": "Should we add a Redis cache in front of Postgres?",
        "format": "deliberation",
        "moderatorId": catalog["chair"].pk,
        "maxRounds": 3,
        "participants": [
            {"agentId": catalog["ada"].pk, "role": "participant"},
            {"agentId": catalog["bob"].pk, "role": "devil_advocate"},
        ],
    }
    body.update(overrides)
    return body


def new_discussion(owner, catalog, **overrides):
    """Another draft discussion with the ``catalog`` agents (the factory makes one per owner)."""
    from rooms.actions.rooms import do_create_room

    body = create_body(catalog)
    args = {"name": body["name"], "topic": body["topic"], "format": body["format"], "moderator_id": catalog["chair"].pk,
            "max_rounds": 3, "participants": [{"agent_id": p["agentId"], "role": p["role"]} for p in body["participants"]]}
    args.update(overrides)
    return do_create_room(owner, **args)
