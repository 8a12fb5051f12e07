"""A facilitation run reads an edited chat message as the person's new statement, once."""
import pytest

from rooms.models import FacilitationRun, Invocation, RoomEvent
from tests.channels_bridge.conftest import (  # noqa: F401 (the bridges' fixtures)
    _bridge_env, committed, post_telegram, run_tasks, telegram)
from tests.facilitation.goals.test_run_in_the_meeting import GROUP, TG, _runs_without_throttle, joined_run  # noqa: F401
from tests.fakes import telegram_updates as tu

pytestmark = pytest.mark.django_db


def say(place, who, text) -> dict:
    update = tu.message(GROUP, TG[who], text)
    place.post(update)
    place.drain()
    return update


def edit(place, original, text) -> dict:
    update = tu.edited(original, text)
    place.post(update)
    place.drain()
    return update


def test_a_corrected_claim_counts_and_the_old_one_is_let_go(telegram, post_telegram, run_tasks):
    place, _, data = joined_run(telegram, post_telegram, run_tasks)
    claim = say(place, "ben", "I'll take Lead")
    assert FacilitationRun.objects.get(room_id=data["id"]).artifact["roles"] == {"Lead": "Ben", "Scribe": None}
    fix = edit(place, claim, "I'll take Scribe")
    place.post(fix)  # Telegram retried the webhook
    place.drain()
    run = FacilitationRun.objects.get(room_id=data["id"])
    assert run.artifact["roles"] == {"Lead": None, "Scribe": "Ben"}
    reads = Invocation.objects.filter(room_id=data["id"], component="goals.read_message", input__edit=1)
    assert reads.count() == 1 and reads.get().input["changes"] == ["Release", "Assign"]


def test_an_edit_that_says_the_same_changes_nothing(telegram, post_telegram, run_tasks):
    place, _, data = joined_run(telegram, post_telegram, run_tasks)
    claim = say(place, "ben", "I'll take Lead")
    version = FacilitationRun.objects.get(room_id=data["id"]).artifact_version
    said = len(place.group_texts())
    edit(place, claim, "I will take the Lead!")
    run = FacilitationRun.objects.get(room_id=data["id"])
    assert run.artifact["roles"] == {"Lead": "Ben", "Scribe": None} and run.artifact_version == version
    assert len(place.group_texts()) == said  # the facilitator says nothing about it
    (read,) = Invocation.objects.filter(room_id=data["id"], component="goals.read_message", input__edit=1)
    assert read.input["changes"] == []


def test_a_confirmation_taken_back_by_an_edit_no_longer_holds(telegram, post_telegram, run_tasks):
    place, _, data = joined_run(telegram, post_telegram, run_tasks)
    say(place, "ben", "I'll take Lead")
    say(place, "cy", "I'll take Scribe")
    yes = say(place, "ben", "confirmed")
    run = FacilitationRun.objects.get(room_id=data["id"])
    assert run.state == FacilitationRun.State.CONFIRMING and run.confirmations == ["Ben"]
    edit(place, yes, "not yet, sorry")
    run = FacilitationRun.objects.get(room_id=data["id"])
    assert run.confirmations == [] and run.state == FacilitationRun.State.CONFIRMING
    shown = RoomEvent.objects.filter(room_id=data["id"], type="discussion:artifact").order_by("-seq").first()
    assert shown.payload["artifact"]["confirmedBy"] == []  # the run's page shows it at once
