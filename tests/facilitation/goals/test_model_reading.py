"""Reading people's messages with a real model: a forced tool call returns the changed slots.

The model is the fake Anthropic Messages API on loopback (real wire format, forced tool use);
the turn is read on a worker's task, once, and the answer is checked against the slots."""
import json
import re

import pytest
from django.contrib.auth.models import Group

from facilitation.goals import extraction, rules
from facilitation.goals.reading import READ_TASK, read_with_model
from rooms import dispatch
from rooms.models import ChatIdentity, FacilitationRun, Invocation, Room
from tests.channels_bridge.conftest import (  # noqa: F401 (the bridges' fixtures)
    _bridge_env, committed, post_teams, post_telegram, run_tasks, teams, telegram)
from tests.factories import make_facilitator, make_user
from tests.fakes import telegram_updates as tu
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.facilitation.goals.test_run_in_the_meeting import GROUP, TG, create_run

pytestmark = pytest.mark.django_db

KEY = "sk-ant-test"


def understand(body: dict) -> dict:
    """The fake model: reads the quoted message like a model would, for a few paraphrases."""
    user = body["messages"][-1]["content"]
    user = user if isinstance(user, str) else "".join(b.get("text", "") for b in user)
    speaker = re.search(r'<message speaker="([^"]+)">', user).group(1)
    message = user[user.index("<message"):].split("\n", 1)[1].split("\n</message>")[0]
    answer = {"confirmed": False, "claims": [], "releases": []}
    if "lead this one" in message:
        answer["claims"].append({"role": "Lead", "person": speaker})
    if "notes" in message:
        answer["claims"].append({"role": "Scribe", "person": "Ben"})
    if "Bob" in message:
        answer["claims"].append({"role": "Lead", "person": "Bob"})  # nobody called Bob is in the meeting
    if "Benny" in message:
        answer["claims"].append({"role": "Lead", "person": "Ben"})  # a nickname the rules cannot place
    if "Admiral" in message:
        answer["claims"].append({"role": "Admiral", "person": speaker})  # no such role
    if "works for me" in message:
        answer["confirmed"] = True
    return answer


@pytest.fixture
def model(settings):
    with FakeAnthropicServer(responder=understand, api_key=KEY) as fake:
        settings.LLM = {**settings.LLM, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.url}
        settings.CONVENE = {**settings.CONVENE, "FALLBACK_PROVIDERS": []}
        yield fake


def settle(run_tasks, attempts=None):
    """Run what was queued: the bridge's tasks, and the model readings as a worker would (once each)."""
    for _ in range(50):
        reads = [s for s in dispatch.sent if s[0] == READ_TASK]
        for item in reads:
            dispatch.sent.remove(item)
            committed(read_with_model, *item[1], last_attempt=True)
        run_tasks()
        if not any(s[0] == READ_TASK for s in dispatch.sent):
            return


@pytest.fixture
def group_run(model, telegram, post_telegram, run_tasks):
    make_facilitator("Convener", key="convener", provider="anthropic")
    owner = make_user("olga")
    managers = Group.objects.create(name="management")
    mia = make_user("mia")
    managers.user_set.add(mia)
    ChatIdentity.objects.create(platform="telegram", external_id="701", name="mia", user=mia)
    data = create_run(owner)
    post_telegram(tu.bot_added(GROUP, TG["ana"]))
    post_telegram(tu.command(GROUP, TG["ana"], f"/facilitator start {data['joinCode']}"))
    settle(run_tasks)

    def say(who, text):
        post_telegram(tu.message(GROUP, TG[who], text))
        settle(run_tasks)

    return Room.objects.get(pk=data["id"]), say


def test_a_paraphrase_the_rules_miss_is_read_by_the_model(group_run, model, telegram):
    room, say = group_run
    assert rules.read("role_assignment", {"roles": ["Lead", "Scribe"]}, {"roles": {}}, "Ana", "happy to lead this one", ["Ana"]) == []
    say("ana", "happy to lead this one")
    say("ben", "I can take notes")
    run = FacilitationRun.objects.get(room=room)
    assert run.artifact["roles"] == {"Lead": "Ana", "Scribe": "Ben"} and run.state == "confirming"
    # The request forced the tool, offered only the run's roles and quoted the message as data.
    body = model.requests[-1]["body"]
    assert body["tool_choice"] == {"type": "tool", "name": extraction.TOOL}
    (tool,) = body["tools"]
    assert tool["input_schema"]["properties"]["claims"]["items"]["properties"]["role"]["enum"] == ["Lead", "Scribe"]
    assert '<message speaker="Ben">\nI can take notes\n</message>' in body["messages"][-1]["content"], body["messages"]
    reads = Invocation.objects.filter(room=room, component="goals.read_message")
    assert reads.count() == 2 and all(r.input["via"] == "model anthropic" for r in reads)

    say("ana", "works for me")
    say("ben", "works for me")
    assert FacilitationRun.objects.get(room=room).state == "completed"
    assert any("Lead: Ana" in m["text"] for m in telegram.sent_to("701"))


def test_what_the_model_invents_is_dropped_and_a_turn_is_read_once(group_run, model):
    room, say = group_run
    say("cy", "Bob should be in charge, and I will be Admiral")
    run = FacilitationRun.objects.get(room=room)
    assert run.artifact["roles"] == {"Lead": None, "Scribe": None}  # Bob is not in the meeting; Admiral is no role
    seq = Invocation.objects.filter(room=room, component="goals.read_message").get().input["seq"]
    calls = len(model.requests)
    assert committed(read_with_model, room.pk, seq, last_attempt=True) == "nothing to read"
    assert len(model.requests) == calls  # a redelivered task neither calls the model again nor reads twice


def test_a_role_given_to_someone_unknown_is_answered_unless_the_model_placed_it(group_run, model, telegram):
    room, say = group_run
    say("ben", "hello")
    before = len(telegram.sent_to(GROUP["id"]))
    say("ana", "let Benny be Lead")  # the model knows Benny is Ben: nothing to answer
    assert FacilitationRun.objects.get(room=room).artifact["roles"]["Lead"] == "Ben"
    assert not [m for m in telegram.sent_to(GROUP["id"])[before:] if "know" in m["text"]]
    say("ana", "let Dan be Scribe")  # nobody the model or the rules can place: Ana hears it
    assert FacilitationRun.objects.get(room=room).artifact["roles"]["Scribe"] is None
    (answer,) = [m["text"] for m in telegram.sent_to(GROUP["id"])[before:] if "know" in m["text"]]
    assert answer.startswith("Convener: @ana_s, I don't know anyone called \u201cDan\u201d here yet")
    read = Invocation.objects.filter(room=room, component="goals.read_message").order_by("-id").first()
    assert read.input["via"] == "model anthropic" and read.input["unplaced"] == ["Unknown"]


def test_an_unavailable_model_retries_then_the_rules_read_the_message(group_run, model, post_telegram, run_tasks):
    from facilitation.llm import TransientLLMError

    room, _ = group_run
    model.fail_next(529, times=10)
    post_telegram(tu.message(GROUP, TG["ana"], "I'll take Lead"))
    run_tasks()
    ((name, (room_id, seq), queue),) = [s for s in dispatch.sent if s[0] == READ_TASK]
    dispatch.sent.clear()
    with pytest.raises(TransientLLMError):
        committed(read_with_model, room_id, seq, last_attempt=False)  # the task retries later
    assert FacilitationRun.objects.get(room=room).artifact["roles"]["Lead"] is None
    assert committed(read_with_model, room_id, seq, last_attempt=True) == "read by rules"
    assert FacilitationRun.objects.get(room=room).artifact["roles"]["Lead"] == "Ana"


def test_the_tool_answer_names_people_as_the_group_writes_them():
    """A person the model names in another case, with a joiner or with spaces, is the roster's person (``same_name``):
    ``STRASSE`` is Straße, ``ŞULE`` Şule."""
    slots = {"roles": ["Lead", "Scribe", "Host"]}
    artifact = {"roles": {"Lead": None, "Scribe": None, "Host": None}}
    answer = json.dumps({"claims": [{"role": "Lead", "person": "STRASSE"}, {"role": "Scribe", "person": "  ŞULE "},
                                    {"role": "Host", "person": "anne  marie"}]})
    roster = ["Straße", "Şule", "Anne Marie"]
    assert extraction.changes("role_assignment", slots, artifact, "Şule", answer, roster) == [
        rules.Assign("Lead", "Straße", "Şule"), rules.Assign("Scribe", "Şule", "Şule"), rules.Assign("Host", "Anne Marie", "Şule")]


def test_the_tool_answer_is_checked_against_the_slots():
    slots = {"roles": ["Lead", "Scribe"]}
    artifact = {"roles": {"Lead": "Ana", "Scribe": None}}
    answer = json.dumps({"confirmed": True, "claims": [{"role": "Lead", "person": "ben"}, {"role": "Scribe", "person": "Ben"},
                                                       {"role": "Chef", "person": "Ben"}, {"role": "Scribe", "person": "Zed"}],
                         "releases": [{"role": "Lead"}]})
    changes = extraction.changes("role_assignment", slots, artifact, "Ben", answer, ["Ana", "Ben"])
    # Ben cannot release Ana's role; his claim on it is a conflict to mediate, never an overwrite.
    assert changes == [rules.Conflict("Lead", "Ana", "Ben"), rules.Assign("Scribe", "Ben", "Ben"), rules.Confirm("Ben")]
    assert extraction.changes("role_assignment", slots, artifact, "Ben", "not json", ["Ben"]) == []
    assert extraction.changes("decision", {"options": ["A", "B"]}, {"choice": None, "proposals": []}, "Ana",
                              json.dumps({"confirmed": False, "choice": "C", "proposals": ["B", "C"]}), ["Ana"]) == [
        rules.Propose("B", "Ana")]
