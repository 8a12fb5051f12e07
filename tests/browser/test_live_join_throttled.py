"""A join the server answers ``throttled`` (too many events for now) is not a refusal: the live connection says it is
busy, joins again once ``retryAfter`` has passed, and says it is live when that join is answered. Only a real refusal
(no access) closes the page's live view."""
import pytest

from rooms.actions.rooms import do_create_room
from rooms.models import Agent

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# A LiveDiscussion of the page's own live.js, on a stand-in socket that answers the joins it is sent with `answers`
# in turn (the same acknowledgements the server sends), recording what the connection tells its page.
SCRIPT = """async (answers) => {
  const seen = { states: [], refused: [], joined: [], sent: [] };
  const live = new window.ConveneLive.LiveDiscussion(1, {
    onConnection: (state, detail) => seen.states.push([state, detail || ""]),
    onRefused: (ack) => seen.refused.push(ack.code),
    onJoined: (ack) => seen.joined.push(ack.seq),
  });
  live.socket = {
    connected: true, id: "stand-in",
    timeout: () => ({ emit: (command, data, answer) => {
      seen.sent.push([command, Date.now()]);
      const ack = answers.shift();
      setTimeout(() => answer(null, ack), 0);
    } }),
  };
  live.join();
  const until = Date.now() + 5000;
  while (Date.now() < until && !live.joined && seen.refused.length === 0) await new Promise((r) => setTimeout(r, 50));
  return { ...seen, joinedNow: live.joined };
}"""


def _room_page(make_page):
    page, owner = make_page("tess")
    chair = Agent.objects.get(is_builtin=True, name="The Impartial Chair")
    architect = Agent.objects.get(is_builtin=True, alias="architect")
    room = do_create_room(owner, name="Throttled", topic="Which cache?", moderator_id=chair.pk,
                          participants=[{"agent_id": architect.pk, "role": "participant"}])
    page.goto(f"/discussions/{room.pk}/")
    page.wait_for_function("() => window.convene.live.joined")
    return page


def test_a_throttled_join_waits_and_joins_again_instead_of_refusing(make_page):
    page = _room_page(make_page)
    seen = page.evaluate(SCRIPT, [
        {"ok": False, "code": "throttled", "error": "Too many events; wait 1 seconds before sending more.", "retryAfter": 1},
        {"ok": True, "seq": 0, "missed": [], "status": "draft"},
    ])
    assert seen["refused"] == [] and seen["joinedNow"] and seen["joined"] == [0]
    (first, at_first), (second, at_second) = seen["sent"]
    assert first == second == "discussion:join" and at_second - at_first >= 950  # after retryAfter, not at once
    assert seen["states"] == [["error", "busy: joining again in 1 s"], ["online", ""]]
    assert page.errors == []


def test_a_refused_join_is_still_a_refusal(make_page):
    page = _room_page(make_page)
    seen = page.evaluate(SCRIPT, [{"ok": False, "code": "forbidden", "error": "You may not view this discussion."}])
    assert seen["refused"] == ["forbidden"] and not seen["joinedNow"] and len(seen["sent"]) == 1
