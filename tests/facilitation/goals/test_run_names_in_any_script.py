"""People whose names are written in any script are given roles by name in a run, and a name the facilitator does not
know is answered, whatever its script: accented capitals (Élodie, Łukasz, Şule), Cyrillic and Greek, scripts without
case (李娜, さくら), and names written right to left (ליאור, سارة), whose quoting keeps the answer's order. What the
platforms' fakes receive is what people read."""
import pytest

from rooms.models import Invocation, Observation
from tests.channels_bridge.conftest import (  # noqa: F401 (the bridges' fixtures)
    _bridge_env, committed, post_teams, post_telegram, run_tasks, teams, telegram)
from tests.facilitation.goals.test_run_in_the_meeting import (  # noqa: F401
    GROUP, TG, Browser, Teams, _runs_without_throttle, joined_in)
from tests.facilitation.goals.test_run_unplaced_roles import (  # noqa: F401
    ROLES, _the_floor_is_open, new_messages, roles, telegram_place)
from tests.fakes import telegram_updates as tu

pytestmark = pytest.mark.django_db

FSI, PDI = "\u2068", "\u2069"  # a first-strong isolate and its end: what sets a right-to-left name off


def know_answers(messages: list[dict]) -> list[str]:
    return [m["text"] for m in messages if "know" in m["text"] or "could be" in m["text"]]


def test_telegram_people_named_in_any_script_are_given_roles(telegram, post_telegram, run_tasks):
    place, room = telegram_place(telegram, post_telegram, run_tasks)
    for uid, first, last in ((630, "Élodie", "Martin"), (631, "李娜", None), (632, "سارة", None)):
        place.post(tu.message(GROUP, tu.user(uid, first, last_name=last), "hello"))  # now the bot knows them
    place.drain()
    before = len(telegram.sent_to(GROUP["id"]))
    place.say("ana", "let Élodie be Lead")
    place.say("ben", "李娜 should be Scribe")
    place.say("cy", "سارة takes Reviewer")
    assert roles(room) == {"Lead": "Élodie Martin", "Scribe": "李娜", "Reviewer": "سارة"}
    assert know_answers(new_messages(telegram, before)) == []
    reads = Invocation.objects.filter(room=room, component="goals.read_message", input__changes=["Assign"])
    assert reads.count() == 3


def test_telegram_a_name_with_an_apostrophe_or_a_hyphen_is_one_name(telegram, post_telegram, run_tasks):
    place, room = telegram_place(telegram, post_telegram, run_tasks)
    for uid, first, last in ((640, "Siobhán", "O'Brien"), (641, "Anne-Marie", "Dupont"), (642, "Marie", "Dupont")):
        place.post(tu.message(GROUP, tu.user(uid, first, last_name=last), "hello"))
    place.drain()
    place.say("ana", "let Siobhán O\u2019Brien be Lead")  # typed with a phone's curly apostrophe
    place.say("ana", "Anne-Marie Dupont should be Scribe")  # not Marie Dupont
    assert roles(room)["Lead"] == "Siobhán O'Brien" and roles(room)["Scribe"] == "Anne-Marie Dupont"


def test_telegram_someone_not_known_is_answered_whatever_the_script(telegram, post_telegram, run_tasks):
    place, room = telegram_place(telegram, post_telegram, run_tasks)
    before = len(telegram.sent_to(GROUP["id"]))
    place.say("ben", "let Øystein be Reviewer")
    (answer,) = new_messages(telegram, before)
    assert answer["text"] == (
        "Convener: @benb, I don't know anyone called \u201cØystein\u201d here yet, so I have left Reviewer as it is. "
        "Once Øystein has written something in this group (anything will do), say it again.")
    assert roles(room)["Reviewer"] is None

    before = len(telegram.sent_to(GROUP["id"]))
    place.say("ben", "さくら should be Scribe")
    (answer,) = new_messages(telegram, before)
    assert "\u201cさくら\u201d" in answer["text"] and "left Scribe as it is" in answer["text"]

    place.post(tu.message(GROUP, tu.user(650, "Øystein", last_name="Berg"), "hei"))  # Øystein writes: now known
    place.drain()
    before = len(telegram.sent_to(GROUP["id"]))
    place.say("ben", "let Øystein be Reviewer")
    assert roles(room)["Reviewer"] == "Øystein Berg"
    assert know_answers(new_messages(telegram, before)) == []


def test_telegram_a_right_to_left_name_is_quoted_without_reordering_the_answer(telegram, post_telegram, run_tasks):
    place, room = telegram_place(telegram, post_telegram, run_tasks)
    before = len(telegram.sent_to(GROUP["id"]))
    place.say("ben", "let ליאור be Reviewer")
    (answer,) = new_messages(telegram, before)
    assert answer["text"] == (
        f"Convener: @benb, I don't know anyone called \u201c{FSI}ליאור{PDI}\u201d here yet, so I have left Reviewer as "
        f"it is. Once {FSI}ליאור{PDI} has written something in this group (anything will do), say it again.")
    assert {"type": "mention", "offset": 10, "length": 5} in answer["entities"]

    # Two people of that first name, one with a direction override in their chat name: both listed, set off.
    for uid, last in ((660, "כהן"), (661, "\u202eלוי")):
        place.post(tu.message(GROUP, tu.user(uid, "ליאור", last_name=last), "שלום"))
    place.drain()
    before = len(telegram.sent_to(GROUP["id"]))
    place.say("ana", "let ליאור be Lead")
    (answer,) = new_messages(telegram, before)
    assert answer["text"] == (
        f"Convener: @ana_s, \u201c{FSI}ליאור{PDI}\u201d could be {FSI}ליאור כהן{PDI} or {FSI}ליאור לוי{PDI}, so I have "
        f"left Lead as it is. Say it again with the full name (\u201clet {FSI}ליאור כהן{PDI} be Lead\u201d).")
    assert "\u202e" not in answer["text"]
    assert roles(room)["Lead"] is None
    place.say("ana", "let ליאור כהן be Lead")
    assert roles(room)["Lead"] == "ליאור כהן"


def test_teams_members_named_in_any_script_are_given_roles_and_a_stranger_is_answered(teams, post_teams, run_tasks):
    place = Teams(teams, post_teams, run_tasks)
    anna = teams.account(30, "Анна Петрова")
    teams.members[place.conv["id"]] = [anna, teams.account(31, "Γιώργος Παπαδόπουλος")]
    owner, data, room = joined_in(place, slots=ROLES)
    place.say("ben", "let Γιώργος be Scribe")
    text = "let <at>Анна Петрова</at> be Lead"
    place.post(teams.message(place.conv, place.people["ana"], text, mentions=[anna]))
    place.drain()
    assert roles(room) == {"Lead": "Анна Петрова", "Scribe": "Γιώργος Παπαδόπουλος", "Reviewer": None}

    before = len(teams.sent_to(place.conv["id"]))
    place.say("cy", "Şule should be Reviewer")
    (answer,) = [a["activity"] for a in teams.sent_to(place.conv["id"])[before:]]
    assert answer["text"] == (
        "**Convener**: <at>Cy</at>, I don't know anyone called \u201cŞule\u201d here yet, so I have left Reviewer as it "
        "is. Say it again with Şule @mentioned (type @ and pick them), or once they have written something in this "
        "chat.")
    assert roles(room)["Reviewer"] is None


def test_the_browser_room_answers_a_right_to_left_name_set_off(telegram, run_tasks):
    place = Browser(run_tasks)
    owner, data, room = joined_in(place, slots=ROLES)
    place.say("ana", "let محمد be Reviewer")
    answer = Observation.objects.filter(room=room, data__purpose="unplaced").get()
    assert answer.content == (
        f"Ana, I don't know anyone called \u201c{FSI}محمد{PDI}\u201d here yet, so I have left Reviewer as it is. Once "
        f"{FSI}محمد{PDI} has written something in a chat linked to this run, or the run's owner has shared this room "
        "with them, say it again.")
    assert answer.data["addressed"] == [{"offset": 0, "length": 3, "name": "Ana"}]
