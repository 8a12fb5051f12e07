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


def _started(*args):
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.runs.scheduling import inline

    room_id = json.loads(cli("new", "--topic", "Ship the importer?", "--rounds", "8", *args, "--json"))["id"]
    with inline():
        do_start_discussion(room_id)
    return room_id


def test_new_with_a_template_then_comment_vote_and_advance_on_the_api_actions(django_user_model):
    from rooms.models import RoomEvent, RoomMember

    room_id = _started("--template", "feature", "--threshold", "0.5", "--human-required")
    room = Room.objects.get(pk=room_id)
    assert (room.template, room.phase) == ("feature", "explore")
    assert room.consensus == {"threshold": 0.5, "reject_blocks": True, "human_required": True}
    said = json.loads(cli("comment", str(room_id), "I", "think", "we", "should.", "--json"))
    assert said["speaker"] == "convene-cli" and said["content"] == "I think we should." and said["kind"] == "contribution"
    turn = Observation.objects.get(room_id=room_id, seq=said["seq"])
    assert turn.author_kind == "human" and turn.data["source"]["platform"] == "cli"
    assert "convene-cli (comment): Also this." in cli("comment", str(room_id), "Also this.")
    moved = json.loads(cli("advance", str(room_id), "--json"))
    assert moved["phase"] == "shape" and moved["votes"]["tally"] == {"ready": 0, "changes": 0, "reject": 0}
    assert RoomEvent.objects.filter(room_id=room_id, type="discussion:phase").count() == 1
    from rooms.models import Invocation

    assert Invocation.objects.filter(room_id=room_id, component="phase.advance").count() == 1
    # A member with participant access votes by comment; the status shows the tally and the consensus.
    ana = django_user_model.objects.create_user("ana", password="x-very-long-password", first_name="Ana")
    RoomMember.objects.create(room=room, user=ana, access="participant")
    voted = json.loads(cli("comment", str(room_id), "VOTE: READY", "--as", "ana", "--json"))
    assert voted["speaker"] == "Ana" and voted["markers"][0]["value"] == "READY"
    status = json.loads(cli("status", str(room_id), "--json"))
    assert status["phase"] == "shape" and status["votes"]["tally"]["ready"] == 1
    assert status["votes"]["votes"][0]["name"] == "Ana"
    text = cli("status", str(room_id))
    assert "phase shape: ready 1, changes 0, reject 0" in text and "consensus" in text
    # Only the owner advances.
    with pytest.raises(CommandError, match="Only the owner"):
        call_command("discussions", "--user", "ana", "advance", str(room_id), stdout=io.StringIO())
    assert Room.objects.get(pk=room_id).phase == "shape"


def test_comment_and_advance_refuse_bad_input_with_clear_errors(django_user_model):
    from rooms.models import RoomMember

    plain = _started()
    with pytest.raises(CommandError, match="No discussion #4242"):
        cli("comment", "4242", "hello")
    with pytest.raises(CommandError, match="No discussion #4242"):
        cli("advance", "4242")
    with pytest.raises(CommandError, match="needs some text"):
        cli("comment", str(plain), "   ")
    with pytest.raises(CommandError, match="No user named 'ghost'"):
        cli("comment", str(plain), "hi", "--as", "ghost")
    with pytest.raises(CommandError, match="no phases"):
        cli("advance", str(plain))
    viewer = django_user_model.objects.create_user("vera", password="x-very-long-password")
    RoomMember.objects.create(room_id=plain, user=viewer, access="viewer")
    with pytest.raises(CommandError, match="Viewers cannot comment"):
        cli("comment", str(plain), "hi", "--as", "vera")
    with pytest.raises(CommandError, match="Unknown template"):
        cli("new", "--topic", "x", "--template", "waterfall")
    with pytest.raises(CommandError, match="threshold must be a number from 0 to 1"):
        cli("new", "--topic", "x", "--threshold", "1.5")
    with pytest.raises(CommandError, match="maxParallel"):
        cli("new", "--topic", "x", "--max-parallel", "4")
    templated = _started("--template", "adr")
    cli("advance", str(templated))
    cli("advance", str(templated))
    with pytest.raises(CommandError, match="last phase"):
        cli("advance", str(templated))
    from facilitation.actions.lifecycle import do_stop_discussion

    do_stop_discussion(plain)
    count = Observation.objects.filter(room_id=plain).count()
    with pytest.raises(CommandError, match="Cannot comment on a discussion that is stopped"):
        cli("comment", str(plain), "too late")
    assert Observation.objects.filter(room_id=plain).count() == count
    assert Room.objects.count() == 2  # the refused ones were never created
