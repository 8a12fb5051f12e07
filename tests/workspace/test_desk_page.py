"""The desk page: served to people who may view the workspace, with the controls their access allows."""
import pytest

from tests.factories import make_user
from tests.workspace.helpers import make_workspace


@pytest.fixture
def setup(db, client):
    owner, viewer, stranger = make_user("boss"), make_user("watcher"), make_user("stranger")
    room = make_workspace(owner, viewer=viewer)
    return client, room, owner, viewer, stranger


def test_owner_gets_the_desk_with_controls(setup):
    client, room, owner, _, _ = setup
    client.force_login(owner)
    page = client.get(f"/workspaces/{room.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="btn-end-round"' in html and 'id="task-form"' in html and "convene/workspace.js" in html
    assert client.get(f"/discussions/{room.pk}/").url == f"/workspaces/{room.pk}/"


def test_viewer_sees_no_controls_and_strangers_nothing(setup):
    client, room, _, viewer, stranger = setup
    client.force_login(viewer)
    html = client.get(f"/workspaces/{room.pk}/").content.decode()
    assert 'id="btn-end-round"' not in html and 'id="task-form"' not in html and 'id="invocations"' not in html
    client.force_login(stranger)
    assert client.get(f"/workspaces/{room.pk}/").status_code == 404
