"""Quality analytics of a discussion (pure) and in GET /api/discussions/{id}."""
import pytest

from facilitation.deliberation import parse_markers
from facilitation.deliberation.analytics import analytics, gini
from facilitation.deliberation.state import RoomState, SeatRef


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


@pytest.mark.django_db
def test_the_discussion_detail_carries_the_analytics(client):
    from facilitation.actions.lifecycle import do_start_discussion
    from facilitation.management.inline import drive_inline
    from facilitation.runs.scheduling import inline
    from tests.factories import make_discussion, make_user

    owner = make_user()
    room = make_discussion(owner, roles=("participant", "devil_advocate"), max_rounds=3)
    with inline():
        do_start_discussion(room)
    drive_inline(room.pk, provider="rehearsal")
    client.force_login(owner)
    data = client.get(f"/api/discussions/{room.pk}").json()["data"]
    stats = data["analytics"]
    assert sum(a["turns"] for a in stats["airtime"]) == 3 and 0 <= stats["gini"] <= 1
    assert {"devilsAdvocateObjections", "openQuestions", "openConcerns", "corrections", "fallbacks"} <= set(stats)
    assert data["usage"]["cacheReadTokens"] >= 0
