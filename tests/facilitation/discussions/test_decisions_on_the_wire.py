"""Facilitator decisions through the real provider clients and the loopback fakes, and the guardrails per preset.

- Anthropic: the decision is a forced tool call whose schema enumerates the speaking seats; an
  invalid one is repaired once, through the same tool, with the validation error.
- OpenAI-compatible: a strict JSON-schema response format, or plain JSON from a server without it;
  the repair works the same way.
- Strict fairness belongs to the Equalizer alone; the other presets are looser.
- When the rounds or the budget run out, a standing REJECT or open concern no longer holds the room,
  and the conclusion lists it as unresolved.
"""
import json

import pytest

from facilitation.actions.lifecycle import do_start_discussion
from facilitation.discussions import steps
from facilitation.engine import Decision, apply_guardrails
from facilitation.llm.base import LLMResponse, Provider
from facilitation.management.inline import drive_inline
from facilitation.presets import FACILITATOR_PRESETS
from facilitation.prompts.builder import facilitator_system
from facilitation.prompts.instructions import STRICT_FAIRNESS
from facilitation.runs.scheduling import inline
from rooms.models import Invocation, Observation, Room
from tests.facilitation.simulated_room import SimulatedRoom
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.factories import make_discussion, make_user

CLOSING = "## Decisions\nNone.\n## Unresolved\nNothing is left open."


class Model(Provider):
    """A model answering with ``answer(request, n)`` (n counts calls of the same purpose)."""

    name = "scripted"

    def __init__(self, answer):
        self.answer, self.requests, self.counts = answer, [], {}

    def complete(self, request):
        self.requests.append(request)
        n = self.counts[request.purpose] = self.counts.get(request.purpose, 0) + 1
        return LLMResponse(text=self.answer(request, n), provider=self.name, model="scripted", input_tokens=10, output_tokens=5)


@pytest.fixture
def use_model(monkeypatch):
    def use(answer):
        model = Model(answer)
        monkeypatch.setattr(steps, "provider_for", lambda name="": model)
        return model
    return use


def user_text(body: dict) -> str:
    parts = []
    for message in body["messages"]:
        content = message["content"]
        parts += [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    return "\n".join(parts)


def speaking_ids(room) -> list[int]:
    return list(room.seats.filter(role__in=("participant", "devil_advocate")).order_by("position").values_list("pk", flat=True))


def decisions(room) -> list[dict]:
    return [o.data for o in Observation.objects.filter(room=room, kind="decision").order_by("seq")]


def run(room, provider: str) -> Room:
    with inline():
        do_start_discussion(room)
    return drive_inline(room.pk, provider=provider)


# --- the tool-call path on both providers, with the repair retry ----------------------------------------


@pytest.mark.django_db
def test_anthropic_decisions_are_forced_tool_calls_and_an_invalid_one_is_repaired_through_the_tool(settings):
    room = make_discussion(make_user(), max_rounds=1)
    ids = speaking_ids(room)
    seen = []

    def respond(body):
        if body.get("tool_choice"):
            seen.append(body)
            if len(seen) == 1:  # the opening names a seat that does not exist
                return {"decision": "continue", "nextParticipantId": 999, "question": "Who goes first?", "reasoning": "r"}
            if 'must decide "synthesize"' in user_text(body):
                return {"decision": "synthesize", "nextParticipantId": None, "question": "", "reasoning": "done"}
            return {"decision": "continue", "nextParticipantId": ids[1], "question": "Second, what do you think?", "reasoning": "r"}
        return CLOSING if "The discussion is over" in user_text(body) else "Caching helps.\nVOTE: READY"

    with FakeAnthropicServer(responder=respond, api_key="sk-test") as fake:
        settings.LLM = {**settings.LLM, "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": fake.url}
        settings.CONVENE = {**settings.CONVENE, "FALLBACK_PROVIDERS": []}
        room = run(room, "anthropic")
    assert room.status == Room.Status.CONCLUDED
    opening = decisions(room)[0]
    assert opening["nextParticipantId"] == ids[1] and opening["fallback"] is None
    assert opening["corrections"][0]["rule"] == "repair" and "second answer was valid" in opening["corrections"][0]["reason"]
    first, repair = seen[0], seen[1]
    for body in (first, repair):  # every decision request forces the decision tool, whose schema lists the speaking seats
        tool = body["tools"][0]
        assert body["tool_choice"] == {"type": "tool", "name": tool["name"]}
        assert tool["input_schema"]["properties"]["nextParticipantId"]["anyOf"][0]["enum"] == ids
    assert repair["messages"][:-2] == first["messages"]  # the same request, then the invalid answer and the error
    assert repair["messages"][-2]["role"] == "assistant" and "999" in repair["messages"][-2]["content"]
    assert repair["messages"][-1]["role"] == "user" and "is not a speaking participant" in repair["messages"][-1]["content"]
    assert Invocation.objects.filter(room=room, component="facilitator.opening", success=False, error__contains="asked again").count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("json_schema", [True, False], ids=["json-schema", "plain-json"])
def test_openai_decisions_use_a_json_schema_where_the_server_supports_it_and_are_repaired(settings, json_schema):
    room = make_discussion(make_user(), max_rounds=1)
    ids = speaking_ids(room)
    seen = []

    def respond(body):
        text = "\n".join(str(m.get("content") or "") for m in body["messages"])
        if '"decision"' in text and "nextParticipantId" in text and "The discussion is over" not in text \
                and "## Your turn" not in text:
            seen.append(body)
            if len(seen) == 1:  # the opening names nobody
                return json.dumps({"decision": "continue", "nextParticipantId": "nobody", "question": "Who?", "reasoning": "r"})
            if 'must decide "synthesize"' in text:
                return json.dumps({"decision": "synthesize", "nextParticipantId": None, "question": "", "reasoning": "done"})
            return json.dumps({"decision": "continue", "nextParticipantId": ids[0], "question": "First, go ahead?", "reasoning": "r"})
        return CLOSING if "The discussion is over" in text else "Caching helps.\nVOTE: READY"

    with FakeOpenAIServer(responder=respond, json_schema=json_schema) as fake:
        settings.LLM = {**settings.LLM, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake.url}
        settings.CONVENE = {**settings.CONVENE, "FALLBACK_PROVIDERS": []}
        room = run(room, "openai")
        sent = [r["body"].get("response_format") for r in fake.requests]
    formats = [body.get("response_format") for body in seen]
    assert room.status == Room.Status.CONCLUDED
    opening = decisions(room)[0]
    assert opening["nextParticipantId"] == ids[0] and opening["corrections"][0]["rule"] == "repair"
    if json_schema:
        assert all(f and f["type"] == "json_schema" and f["json_schema"]["strict"] for f in formats)
        assert formats[0]["json_schema"]["schema"]["properties"]["nextParticipantId"]["anyOf"][0]["enum"] == ids
    else:  # refused once (a 400), then asked in plain JSON, the format the prompt describes, from then on
        assert sent[0]["type"] == "json_schema" and len(sent) == len(seen) + 3  # + the refusal, the turn, the synthesis
        assert formats == [None] * len(seen) and len(seen) == 3
    repair = [b for b in seen if b["messages"][-1]["role"] == "user" and "cannot be used" in b["messages"][-1]["content"]]
    assert len(repair) == 1 and '"nobody"' in repair[0]["messages"][-2]["content"]


# --- strict fairness per preset ---------------------------------------------------------------------


def test_only_the_equalizer_is_strict_about_airtime():
    outcomes = {}
    for preset in FACILITATOR_PRESETS:
        sim = SimulatedRoom(preset["key"], max_rounds=6)
        for seq, seat in enumerate((11, 12), start=1):
            sim.records.append({"kind": "contribution", "seq": seq, "round": seq, "seatId": seat, "speaker": sim.agents[seat].name,
                                "content": "A point of view.", "markers": [], "status": "ok"})
        sim.state.round, sim.state.phase, sim.state.lastSeatId = 2, "evaluation", 12
        ctx = sim.ctx()
        # Architect (11) again while the devil's advocate (13) has not been heard: allowed once more, except by strict fairness.
        decision = apply_guardrails(Decision("continue", 11, "Architect, say more?", "r"), ctx.guardrail_facts(4), opening=False)
        outcomes[preset["key"]] = (decision.next_participant_id, tuple(c["rule"] for c in decision.corrections))
        assert (STRICT_FAIRNESS.strip() in facilitator_system(ctx)) == (preset["key"] == "equalizer"), preset["key"]
    assert outcomes.pop("equalizer") == (13, ("strict_share",))
    assert len(outcomes) == 7 and set(outcomes.values()) == {(11, ())}


# --- blockers when the rounds or the budget run out ----------------------------------------------------


def _blocked_room_model(seats, reject_text="This cannot ship without a rollback plan.\nVOTE: REJECT"):
    first, second = seats

    def answer(request, n):
        if request.purpose in ("opening", "evaluation"):
            return json.dumps({"decision": "synthesize", "reasoning": "enough"}) if request.purpose == "evaluation" else \
                json.dumps({"decision": "continue", "nextParticipantId": first, "question": "First?", "reasoning": "r"})
        if request.purpose == "contribution":
            return reject_text + "\nCONCERN: Nobody owns the purge keys." if n == 1 else "Something else entirely."
        return CLOSING  # a conclusion that leaves the blockers out
    return answer


@pytest.mark.django_db
def test_when_the_rounds_run_out_a_standing_reject_and_an_open_concern_are_listed_as_unresolved(use_model):
    room = make_discussion(make_user(), max_rounds=1)
    model = use_model(_blocked_room_model(speaking_ids(room)))
    room = run(room, "")
    assert room.status == Room.Status.CONCLUDED and room.round == 1
    evaluation = decisions(room)[-1]
    assert evaluation["decision"] == "synthesize" and evaluation["corrections"] == []  # no rounds left: the blockers do not hold
    synthesis = [r for r in model.requests if r.purpose == "synthesis"]
    state = synthesis[0].messages[0]["content"][-1]["text"]
    assert 'Standing REJECT votes, unanswered: "Agent0' in state and "- C1 by " in state and "Nobody owns the purge keys" in state
    assert len(synthesis) == 3  # the conclusion was written again twice with the omissions, then accepted with its gaps
    gaps = room.conclusion.split("## Not covered by this conclusion", 1)[1]
    assert "REJECT vote" in gaps and "Concern C1" in gaps and "Nobody owns the purge keys" in gaps


@pytest.mark.django_db
def test_when_the_budget_runs_out_a_standing_reject_no_longer_holds_the_room_and_is_listed(use_model, settings):
    settings.LLM_PRICES = {**settings.LLM_PRICES, "scripted": {"input": 1000.0, "output": 1000.0, "cache_write": 0, "cache_read": 0}}
    room = make_discussion(make_user(), max_rounds=5)
    Room.objects.filter(pk=room.pk).update(budget_usd="2.0")
    use_model(_blocked_room_model(speaking_ids(room)))
    room = run(room, "")
    assert room.status == Room.Status.CONCLUDED and room.round < 5
    assert Observation.objects.get(room=room, kind="synthesis").data["reason"] == "budget"
    assert "REJECT" in room.conclusion and "Nobody owns the purge keys" in room.conclusion
