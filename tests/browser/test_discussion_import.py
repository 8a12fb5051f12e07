"""The discussion list imports a discussion file (what a room's "Export discussion file" writes): the new discussion
opens; a file that is not one (the minutes, say) is said to be none, on the list."""
import pytest

from rooms.actions.rooms import do_create_room
from rooms.models import Agent, Room
from tests.browser.conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_discussion_file_is_imported_from_the_list(make_page, tmp_path):
    page, owner = make_page("ines")
    chair = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    architect = Agent.objects.get(is_builtin=True, alias="architect")
    room = do_create_room(owner, name="Exported", topic="Which cache?", moderator_id=chair.pk,
                          participants=[{"agent_id": architect.pk, "role": "participant"}])
    exported = page.request.get(f"/api/discussions/{room.pk}/export?format=md")
    assert exported.ok
    bad = tmp_path / "notes.md"
    bad.write_text("# Just some notes\n")
    good = tmp_path / "exported.md"
    good.write_bytes(exported.body())

    page.goto("/")
    page.locator("#import-file").set_input_files(str(bad))
    error = page.locator("#import-error")
    error.wait_for()
    assert error.inner_text().startswith('notes.md is not a discussion file. Choose one written by a room\'s "Export discussion file"')
    page.get_by_role("button", name="Import discussion file").wait_for()  # usable again
    assert Room.objects.filter(owner=owner).count() == 1
    shot(page, "list-import-error.png")

    page.locator("#import-file").set_input_files(str(good))
    page.wait_for_url(lambda url: url.rstrip("/").split("/")[-1] != str(room.pk) and "/discussions/" in url)
    imported = Room.objects.filter(owner=owner).exclude(pk=room.pk).get()
    assert page.url.endswith(f"/discussions/{imported.pk}/") and imported.name == "Exported"
    assert not page.errors, page.errors
