"""People named by their @username in a run's messages ("let @benb be Lead") are given roles as when named by name;
the message itself is kept as written."""
import pytest

from facilitation.goals.reading import handles_of, named_by_handle
from rooms.meeting import person_of_identity, person_of_user
from rooms.models import ChatIdentity, Observation
from tests.channels_bridge.conftest import (  # noqa: F401 (the bridges' fixtures)
    _bridge_env, committed, post_teams, post_telegram, run_tasks, teams, telegram)
from tests.facilitation.goals.test_run_in_the_meeting import (  # noqa: F401
    GROUP, TG, Browser, _runs_without_throttle, joined_in)
from tests.facilitation.goals.test_run_unplaced_roles import (  # noqa: F401
    ROLES, _the_floor_is_open, roles, telegram_place)
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def test_telegram_people_named_by_username_are_given_roles(telegram, post_telegram, run_tasks):
    place, room = telegram_place(telegram, post_telegram, run_tasks)
    place.say("cy", "hello")  # Cy has written: the bot knows cy_d
    place.say("ana", "let @benb be Lead")
    place.say("ben", "@CY_D should be Scribe")  # usernames are read in any case
    assert roles(room) == {"Lead": "Ben", "Scribe": "Cy", "Reviewer": None}
    place.say("ben", "let @nobody_knows be Reviewer")  # nobody in the meeting answers to it: nothing changes
    assert roles(room)["Reviewer"] is None
    said = list(Observation.objects.filter(room=room, author_name="Ana").values_list("content", flat=True))
    assert "let @benb be Lead" in said  # the message is kept as written


def test_browser_people_named_by_account_name_are_given_roles(run_tasks):
    place = Browser(run_tasks)
    owner, data, room = joined_in(place, slots=ROLES)
    place.say("ana", "let @cy be Scribe")
    assert roles(room)["Scribe"] == "Cy"


def test_a_username_is_replaced_only_where_it_stands_alone():
    handles = {"benb": "Ben Brown", "cy_d": "Cy"}
    assert named_by_handle("let @benb be Lead, @Cy_D Scribe", handles) == "let Ben Brown be Lead, Cy Scribe"
    assert named_by_handle("mail ana@benb.org or @benbx", handles) == "mail ana@benb.org or @benbx"
    assert named_by_handle("no handles here", {}) == "no handles here"


def test_a_username_people_of_different_names_answer_to_names_nobody():
    user = make_user("sam", first_name="Sam", last_name="Web")
    chat = ChatIdentity.objects.create(platform="telegram", external_id="77", name="Samantha", username="Sam")
    known = ChatIdentity.objects.create(platform="telegram", external_id="78", name="Kim", username="kim_k")
    people = [person_of_user(user), person_of_identity(chat), person_of_identity(known)]
    assert [p.name for p in people] == ["Sam Web", "Samantha", "Kim"]
    assert handles_of(people) == {"kim_k": "Kim"}
