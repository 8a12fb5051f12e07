"""A role given to someone the facilitator cannot place, or a role the run does not have, is answered in the group:
addressed to whoever said it, once, with how to fix it on that platform. What the platforms' fakes receive is what
people read."""
import pytest

from rooms.models import FacilitationRun, Invocation, Observation
from tests.channels_bridge.conftest import (  # noqa: F401 (the bridges' fixtures)
    _bridge_env, committed, post_teams, post_telegram, run_tasks, teams, telegram)
from tests.facilitation.goals.test_run_in_the_meeting import (  # noqa: F401
    GROUP, TG, Browser, Teams, Telegram, _runs_without_throttle, joined_in)
from tests.fakes import telegram_updates as tu

pytestmark = pytest.mark.django_db

ROLES = {"roles": ["Lead", "Scribe", "Reviewer"]}
EVIL = "[x](http://evil.example)"


@pytest.fixture(autouse=True)
def _the_floor_is_open(settings):
    """These tests count what the facilitator says; the floor's per-minute limit is another test's subject."""
    settings.CONVENE = {**settings.CONVENE, "FACILITATION_MESSAGES_PER_MINUTE": 100}


def roles(room) -> dict:
    return FacilitationRun.objects.get(room=room).artifact["roles"]


def telegram_place(telegram, post_telegram, run_tasks):
    place = Telegram(telegram, post_telegram, run_tasks)
    owner, data, room = joined_in(place, slots=ROLES)
    return place, room


def new_messages(telegram, since: int) -> list[dict]:
    return telegram.sent_to(GROUP["id"])[since:]


def test_telegram_someone_not_known_yet_is_said_back_once_and_known_after_writing(telegram, post_telegram, run_tasks):
    place, room = telegram_place(telegram, post_telegram, run_tasks)
    before = len(telegram.sent_to(GROUP["id"]))
    update = tu.message(GROUP, TG["ben"], "let Dan be Reviewer")
    place.post(update)
    place.post(update)  # Telegram delivered the update again
    place.drain()
    (answer,) = new_messages(telegram, before)
    assert answer["text"] == (
        "Convener: @benb, I don't know anyone called \u201cDan\u201d here yet, so I have left Reviewer as it is. "
        "Once Dan has written something in this group (anything will do), say it again.")
    assert {"type": "mention", "offset": 10, "length": 5} in answer["entities"]  # Ben is addressed
    assert roles(room) == {"Lead": None, "Scribe": None, "Reviewer": None}
    (read,) = Invocation.objects.filter(room=room, component="goals.read_message", input__speaker="Ben")
    assert read.input["changes"] == [] and read.input["unplaced"] == ["Unknown"]

    place.post(tu.message(GROUP, tu.user(610, "Dan", "dan_r"), "hi all"))  # Dan writes: now he is known
    place.drain()
    sent = len(telegram.sent_to(GROUP["id"]))
    place.say("ben", "let Dan be Reviewer")
    assert roles(room)["Reviewer"] == "Dan"
    assert not [m for m in new_messages(telegram, sent) if "know" in m["text"]]  # a known name works as before


def test_telegram_a_mention_without_username_makes_the_person_known(telegram, post_telegram, run_tasks):
    """Someone without an @username is mentioned by a ``text_mention``, which carries their account: no answer
    needed. (An @username names an account the bot may never have seen, so the answer asks for a message instead.)"""
    place, room = telegram_place(telegram, post_telegram, run_tasks)
    before = len(telegram.sent_to(GROUP["id"]))
    eve = tu.user(611, "Eve", last_name="Moss")
    text = "let Eve Moss be Scribe"
    place.post(tu.message(GROUP, TG["ana"], text,
                          entities=[{"type": "text_mention", "offset": 4, "length": 8, "user": eve}]))
    place.drain()
    assert roles(room)["Scribe"] == "Eve Moss"
    assert not [m for m in new_messages(telegram, before) if "know" in m["text"]]


def test_telegram_a_name_several_people_share_lists_them_as_typed_and_places_nobody(telegram, post_telegram, run_tasks):
    place, room = telegram_place(telegram, post_telegram, run_tasks)
    for uid, last in ((620, "Park"), (621, EVIL)):
        place.post(tu.message(GROUP, tu.user(uid, "Cy", last_name=last), "hello"))
    place.drain()
    before = len(telegram.sent_to(GROUP["id"]))
    place.say("ana", "let Cy be Lead")
    (answer,) = new_messages(telegram, before)
    assert answer["text"] == (
        f"Convener: @ana_s, \u201cCy\u201d could be Cy Park or Cy {EVIL}, so I have left Lead as it is. Say it again "
        "with the full name (\u201clet Cy Park be Lead\u201d).")
    # People's names are text: no link, no formatting but the speaker's name and the mention.
    assert sorted(e["type"] for e in answer["entities"]) == ["bold", "mention"]
    assert roles(room)["Lead"] is None  # no guess
    place.say("ana", "let Cy Park be Lead")
    assert roles(room)["Lead"] == "Cy Park"


def test_telegram_a_role_the_run_does_not_have_is_answered_with_the_roles_it_has(telegram, post_telegram, run_tasks):
    place, room = telegram_place(telegram, post_telegram, run_tasks)
    before = len(telegram.sent_to(GROUP["id"]))
    place.say("ben", "Let Ana be Emperor")
    (answer,) = new_messages(telegram, before)
    assert answer["text"] == ("Convener: @benb, I have no role \u201cEmperor\u201d to give: this run's roles are Lead, "
                              "Scribe and Reviewer.")
    assert roles(room) == {"Lead": None, "Scribe": None, "Reviewer": None}


def test_telegram_an_absurdly_long_name_is_cut_in_the_answer(telegram, post_telegram, run_tasks):
    place, room = telegram_place(telegram, post_telegram, run_tasks)
    before = len(telegram.sent_to(GROUP["id"]))
    place.say("ben", "let " + "Z" * 3000 + " be Lead")
    (answer,) = new_messages(telegram, before)
    assert f"\u201c{'Z' * 39}\u2026\u201d" in answer["text"] and "Z" * 40 not in answer["text"]
    assert len(answer["text"]) < 400


def test_telegram_a_corrected_name_is_answered_for_the_correction_only(telegram, post_telegram, run_tasks):
    place, room = telegram_place(telegram, post_telegram, run_tasks)
    original = tu.message(GROUP, TG["ben"], "let Dna be Reviewer")
    place.post(original)
    place.drain()
    before = len(telegram.sent_to(GROUP["id"]))
    fix = tu.edited(original, "let Dan be Reviewer")
    place.post(fix)
    place.post(fix)  # the edit delivered again
    place.drain()
    (answer,) = new_messages(telegram, before)
    assert "\u201cDan\u201d" in answer["text"] and "Dna" not in answer["text"]
    sent = len(telegram.sent_to(GROUP["id"]))
    place.post(tu.edited(original, "let Dan be Reviewer, please"))  # asks the same again: already answered
    place.drain()
    assert new_messages(telegram, sent) == []


def test_teams_someone_not_known_yet_can_be_at_mentioned(teams, post_teams, run_tasks):
    place = Teams(teams, post_teams, run_tasks)
    owner, data, room = joined_in(place, slots=ROLES)
    before = len(teams.sent_to(place.conv["id"]))
    place.say("ben", "let Dan be Reviewer")
    (answer,) = [a["activity"] for a in teams.sent_to(place.conv["id"])[before:]]
    assert answer["text"] == (
        "**Convener**: <at>Ben</at>, I don't know anyone called \u201cDan\u201d here yet, so I have left Reviewer as it "
        "is. Say it again with Dan @mentioned (type @ and pick them), or once they have written something in this chat.")
    assert answer["entities"] == [{"type": "mention", "text": "<at>Ben</at>",
                                   "mentioned": {"id": place.people["ben"]["id"], "name": "Ben"}}]
    assert roles(room)["Reviewer"] is None

    dan = teams.account(9, "Dan Brown")
    place.post(teams.message(place.conv, place.people["ben"], "let <at>Dan Brown</at> be Reviewer", mentions=[dan]))
    place.drain()
    assert roles(room)["Reviewer"] == "Dan Brown"


def test_teams_a_name_several_members_share_is_listed_escaped(teams, post_teams, run_tasks):
    """Teams lists a chat's members when the bot is added: they are known before they write."""
    place = Teams(teams, post_teams, run_tasks)
    teams.members[place.conv["id"]] = [teams.account(20, "Cy Park"), teams.account(21, f"Cy {EVIL}")]
    owner, data, room = joined_in(place, slots=ROLES)
    before = len(teams.sent_to(place.conv["id"]))
    place.say("ana", "let Cy be Lead")
    (answer,) = [a["activity"] for a in teams.sent_to(place.conv["id"])[before:]]
    assert answer["textFormat"] == "markdown"
    assert answer["text"] == (
        "**Convener**: <at>Ana</at>, \u201cCy\u201d could be Cy Park or Cy \\[x\\](http://evil.example), so I have left "
        "Lead as it is. Say it again with the full name (\u201clet Cy Park be Lead\u201d).")
    assert roles(room)["Lead"] is None


def test_the_browser_room_says_how_someone_becomes_known_there(telegram, run_tasks):
    place = Browser(run_tasks)
    owner, data, room = joined_in(place, slots=ROLES)
    place.say("ana", "let Dan be Reviewer")
    answer = Observation.objects.filter(room=room, data__purpose="unplaced").get()
    assert answer.content == (
        "Ana, I don't know anyone called \u201cDan\u201d here yet, so I have left Reviewer as it is. Once Dan has written "
        "something in a chat linked to this run, or the run's owner has shared this room with them, say it again.")
    assert answer.data["addressed"] == [{"offset": 0, "length": 3, "name": "Ana"}]
