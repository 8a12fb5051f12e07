"""Quality analytics of a discussion (pure) and in GET /api/discussions/{id}."""
import json

import pytest

from facilitation.deliberation import parse_markers
from facilitation.deliberation.analytics import analytics, gini
from facilitation.deliberation.state import RoomState, SeatRef
from facilitation.llm.base import LLMResponse, Provider


def test_gini():
    assert gini([]) == 0 and gini([0, 0]) == 0 and gini([5, 5, 5]) == 0
    assert gini([0, 0, 10]) == pytest.approx(0.667, abs=0.001)


def test_airtime_objections_open_items_and_corrections():
    seats = [SeatRef(1, "Ana"), SeatRef(2, "Ben", "devil_advocate"), SeatRef(3, "Obs", "observer")]
    state = RoomState(seats)
    for seq, (seat, text) in enumerate([(1, "one two three four five six"), (2, "CONCERN: no rollback plan\nQ: who pays?\nVOTE: REJECT")], 1):
        state.record_turn(seq, seq, seat, text, parse_markers(text))
    data = analytics(state, [{"fallback": "unparsable", "corrections": [{"rule": "no_repeat", "reason": "x"}]},
                             {"fallback": None, "corrections": [{"rule": "no_repeat", "reason": "y"}, {"rule": "repair", "reason": "z"}]}])
    assert [(a["name"], a["turns"], a["words"], a["share"]) for a in data["airtime"]] == [("Ana", 1, 6, 0.4), ("Ben", 1, 9, 0.6)]
    assert data["gini"] == 0.1
    assert [o["text"] for o in data["devilsAdvocateObjections"]] == ["no rollback plan", "who pays?"]
    assert [q["id"] for q in data["openQuestions"]] == ["Q1"] and [c["id"] for c in data["openConcerns"]] == ["C1"]
    assert data["standingRejects"][0]["name"] == "Ben"
    assert data["corrections"] == {"no_repeat": 2, "repair": 1} and data["fallbacks"] == {"unparsable": 1}


class Model(Provider):
    """A scripted model that reports cache usage on every call, like Anthropic's."""

    name = "scripted"

    def __init__(self, answer):
        self.answer, self.counts = answer, {}

    def complete(self, request):
        n = self.counts[request.purpose] = self.counts.get(request.purpose, 0) + 1
        return LLMResponse(text=self.answer(request, n), provider=self.name, model="scripted", input_tokens=10, output_tokens=5,
                           cache_read_tokens=70, cache_write_tokens=30)


@pytest.mark.django_db
def test_the_discussion_detail_answers_with_every_figure_of_the_analytics(client, monkeypatch):
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.discussions import steps
    from facilitation.management.inline import drive_inline
    from facilitation.runs.scheduling import inline
    from rooms.models import Invocation
    from tests.factories import make_discussion, make_user

    owner = make_user()
    room = make_discussion(owner, roles=("participant", "devil_advocate"), max_rounds=3)
    ana, ben = room.seats.filter(role__in=("participant", "devil_advocate")).order_by("position")

    def go(seat, question="Go on?"):
        return json.dumps({"decision": "continue", "nextParticipantId": seat.pk, "question": question, "reasoning": "r"})

    def answer(request, n):
        if request.purpose == "opening":
            return "I am not sure." if n <= 2 else go(ana)  # unparsable twice: repaired once, then a fallback
        if request.purpose == "evaluation":
            return [go(ana), json.dumps({"decision": "synthesize", "reasoning": "done"}), json.dumps({"decision": "synthesize"})][n - 1]
        if request.purpose == "contribution":
            return {1: "We cache product reads for five minutes at the edge.\nVOTE: READY",
                    2: "CONCERN: Stale prices reach the basket.\nQ: Who purges the stock levels?\nVOTE: REJECT",
                    3: "I agree with the plan."}[n]
        return "## Decisions\nNone.\n## Unresolved\nNothing is left open."  # leaves every open item out

    model = Model(answer)
    monkeypatch.setattr(steps, "provider_for", lambda name="": model)
    with inline():
        do_start_discussion(room)
    drive_inline(room.pk)
    client.force_login(owner)
    data = client.get(f"/api/discussions/{room.pk}").json()["data"]
    stats = data["analytics"]

    # airtime share per speaker (of the words) and its Gini coefficient
    assert [(a["seatId"], a["role"], a["turns"], a["words"]) for a in stats["airtime"]] == [
        (ana.pk, "participant", 2, 17), (ben.pk, "devil_advocate", 1, 14)]
    assert [a["share"] for a in stats["airtime"]] == [0.548, 0.452] and stats["gini"] == 0.048
    # the devil's advocate's objections, the questions and concerns left open, the standing REJECT
    assert [(o["id"], o["kind"], o["text"], o["status"]) for o in stats["devilsAdvocateObjections"]] == [
        ("C1", "concern", "Stale prices reach the basket.", "open"), ("Q1", "question", "Who purges the stock levels?", "open")]
    assert [q["id"] for q in stats["openQuestions"]] == ["Q1"] and [c["id"] for c in stats["openConcerns"]] == ["C1"]
    assert stats["standingRejects"] == []  # the REJECT was answered: the room was held back until then (below)
    # corrections and fallbacks, by rule (the rule names as in each decision's corrections): the repair, the
    # repeat, the conclusion held back by the REJECT
    assert stats["corrections"] == {"repair": 1, "no_repeat": 1, "open_objection": 1}
    assert stats["fallbacks"] == {"unparsable": 1}
    # the conclusion check: written three times, the gaps listed
    check = stats["conclusionCheck"]
    assert check["attempts"] == 3 and check["redone"] == 2
    assert [(g["id"], g["kind"], g["by"]) for g in check["gaps"]] == [("C1", "concern", ben.agent.name), ("Q1", "question", ben.agent.name)]
    assert "## Not covered by this conclusion" in data["conclusion"]
    # the cache tokens each call read and wrote, recorded per call and shown for the room
    calls = Invocation.objects.filter(room=room, kind=Invocation.Kind.CALL).exclude(provider="")
    assert calls.count() >= 10 and {(c.cache_read_tokens, c.cache_write_tokens) for c in calls} == {(70, 30)}
    assert data["usage"]["cacheReadTokens"] == 70 * calls.count() and data["usage"]["cacheWriteTokens"] == 30 * calls.count()


@pytest.mark.django_db
def test_analytics_before_any_turn(client):
    from tests.factories import make_discussion, make_user

    owner = make_user()
    room = make_discussion(owner)
    client.force_login(owner)
    stats = client.get(f"/api/discussions/{room.pk}").json()["data"]["analytics"]
    assert [a["turns"] for a in stats["airtime"]] == [0, 0] and stats["gini"] == 0
    assert stats["openQuestions"] == [] and stats["corrections"] == {} and stats["conclusionCheck"] is None
