"""``manage.py discussions``: every subcommand on the same actions as the API, with clear errors."""
import io
import json

import pytest
from django.core.management import CommandError, call_command

from facilitation.presets.seed import seed_presets
from rooms.models import Observation, Room

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def presets():
    seed_presets()


def cli(*args):
    out = io.StringIO()
    call_command("discussions", *args, stdout=out)
    return out.getvalue()


def test_new_start_turn_status_participants_list_run_export_import(tmp_path, settings):
    created = json.loads(cli("new", "--topic", "Should we cache?", "--rounds", "3", "--json"))
    room_id = created["id"]
    assert created["status"] == "draft"
    people = json.loads(cli("participants", str(room_id), "--json"))
    assert [p["role"] for p in people].count("participant") == 3 and people[0]["role"] == "facilitator"
    with pytest.raises(CommandError, match="only an active discussion"):
        cli("turn", str(room_id))
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.runs.scheduling import inline

    with inline():
        do_start_discussion(room_id)
    opening = json.loads(cli("turn", str(room_id), "--json"))
    assert len(opening) == 1 and opening[0]["kind"] == "decision"
    assert Observation.objects.filter(room_id=room_id).count() == 1
    cli("run", str(room_id))
    status = json.loads(cli("status", str(room_id), "--json"))
    assert status["status"] == "concluded" and status["turns"] >= 1
    listed = json.loads(cli("list", "--json"))
    assert [d["id"] for d in listed] == [room_id]
    assert "concluded" in cli("list")
    target = tmp_path / "discussion.md"
    assert "Wrote" in cli("export", str(room_id), "-o", str(target))
    assert target.read_text().startswith("<!-- convene discussion file v1 -->")
    imported = json.loads(cli("import", str(target), "--json"))
    assert imported["id"] != room_id and imported["status"] == "concluded"
    assert cli("export", str(imported["id"])).split("### Turn", 1)[1] == target.read_text().split("### Turn", 1)[1]


def test_clear_errors_for_unknown_ids_users_and_bad_input(tmp_path):
    with pytest.raises(CommandError, match="No discussion #999"):
        cli("status", "999")
    with pytest.raises(CommandError, match="No user named 'ghost'"):
        call_command("discussions", "--user", "ghost", "list", stdout=io.StringIO())
    with pytest.raises(CommandError, match="No facilitator named 'Nobody'"):
        cli("new", "--topic", "x", "--facilitator", "Nobody")
    with pytest.raises(CommandError, match="No participant agent 'zzz'"):
        cli("new", "--topic", "x", "--participants", "zzz")
    with pytest.raises(CommandError, match="maxRounds.*from 1 to 20"):
        cli("new", "--topic", "x", "--rounds", "99")
    bad = tmp_path / "bad.md"
    bad.write_text("not a discussion file")
    with pytest.raises(CommandError, match="line 1"):
        cli("import", str(bad))
    with pytest.raises(CommandError, match="No file"):
        cli("import", str(tmp_path / "missing.md"))
    assert Room.objects.count() == 0


def test_another_users_discussion_is_invisible(django_user_model):
    room_id = json.loads(cli("new", "--topic", "Mine", "--json"))["id"]
    django_user_model.objects.create_user("mallory", password="x-very-long-password")
    with pytest.raises(CommandError, match=f"No discussion #{room_id}"):
        call_command("discussions", "--user", "mallory", "status", str(room_id), stdout=io.StringIO())
