"""Discussions through the real worker path: bundled Redis, a Celery worker process, the test database."""
import json
import os
import signal
import time

import pytest

from facilitation.actions.lifecycle import do_start_discussion
from facilitation.runs import leases
from rooms.models import Invocation, Observation, Room
from tests.factories import make_discussion, make_user
from tests.waiting import wait_for

pytestmark = pytest.mark.worker


def finished(room_id):
    room = Room.objects.get(pk=room_id)
    return room if room.is_terminal else None


def assert_clean_transcript(room):
    turns = list(Observation.objects.filter(room=room, kind="contribution").order_by("seq"))
    assert [t.round for t in turns] == list(range(1, room.round + 1)), "a turn is missing or doubled"
    seqs = list(Observation.objects.filter(room=room).order_by("seq").values_list("seq", flat=True))
    assert len(seqs) == len(set(seqs))


def _messages_sent(redis_url: str) -> int:
    """Task messages put on the broker so far (the Redis transport LPUSHes each one)."""
    import redis

    return redis.Redis.from_url(redis_url).info("commandstats").get("cmdstat_lpush", {}).get("calls", 0)


def test_discussion_concludes_through_the_worker_on_rehearsal(live_worker):
    owner = make_user()
    room = make_discussion(owner, max_rounds=3)
    before = _messages_sent(live_worker.redis_url)
    do_start_discussion(room)
    room = wait_for(lambda: finished(room.pk), timeout=60)
    assert room.status == "concluded" and room.conclusion.startswith("[Offline rehearsal")
    assert_clean_transcript(room)
    assert set(Observation.objects.filter(room=room).values_list("provider", flat=True)) == {"rehearsal"}
    # Eight steps, one message: the start's. The worker carried the room on from step to step.
    assert Observation.objects.filter(room=room).count() == 8
    assert _messages_sent(live_worker.redis_url) - before == 1


def _anthropic_responder():
    def respond(body):
        text = " ".join(b.get("text", "") for m in body["messages"] for b in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}]))
        if "The discussion is over" in text:
            return "We agreed to cache the catalogue with a short TTL. Unresolved: stale prices. Recommendation: measure first."
        if body.get("tools"):  # a decision: the tool's schema names the speaking seats
            ids = body["tools"][0]["input_schema"]["properties"]["nextParticipantId"]["anyOf"][0]["enum"]
            turns = text.count("<turn ")
            if 'must decide "synthesize"' in text:
                return {"decision": "synthesize", "nextParticipantId": None, "question": "", "reasoning": "Done.",
                        "progress": {"coverage": 1, "openQuestions": 0}}
            return {"decision": "continue", "nextParticipantId": ids[turns % len(ids)], "question": f"Question number {turns + 1}?",
                    "reasoning": "Hear the next voice.", "progress": {"coverage": 0.5, "openQuestions": 0}}
        return "I think caching helps.\nCONCERN: stale prices.\nVOTE: CHANGES"
    return respond


def test_discussion_concludes_through_the_worker_on_the_anthropic_client(stack_factory):
    from tests.fakes.anthropic_server import FakeAnthropicServer

    with FakeAnthropicServer(responder=_anthropic_responder()) as fake:
        stack_factory(extra_env={"LLM_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": "sk-test"})
        owner = make_user()
        room = make_discussion(owner, max_rounds=2)
        do_start_discussion(room)
        room = wait_for(lambda: finished(room.pk), timeout=60)
        assert room.status == "concluded"
        assert "cache the catalogue" in room.conclusion
        assert_clean_transcript(room)
        calls = Invocation.objects.filter(room=room, kind=Invocation.Kind.CALL)
        assert calls.count() == 6 and set(calls.values_list("provider", flat=True)) == {"anthropic"}
        # The stable prefix is cached: later calls with the same facilitator prefix read from the cache.
        assert sum(c.cache_read_tokens for c in calls) > 0 and all(c.input_tokens > 0 for c in calls)
        assert all(r["body"]["system"][0]["cache_control"] == {"type": "ephemeral"} for r in fake.requests)
        decisions = Observation.objects.filter(room=room, kind="decision")
        assert all(d.data["fallback"] is None and d.data["corrections"] == [] for d in decisions)
        forced = [r["body"] for r in fake.requests if r["body"].get("tools")]
        assert len(forced) == 3 and all(b["tool_choice"] == {"type": "tool", "name": "record_decision"} for b in forced)


def slow_scripted_env(tmp_path, turn_seconds: float, timeout: int) -> dict:
    """Worker settings for a scripted model whose turns take a while, with short leases and a quick sweeper."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"purpose": "contribution", "delay": turn_seconds, "text": "Round {round}. Q: and then?"}]))
    return {"LLM_PROVIDER": "scripted", "CONVENE_SCRIPT_FILE": str(script), "CONVENE_PARTICIPANT_TIMEOUT": str(timeout),
            "CONVENE_FACILITATOR_TIMEOUT": str(timeout), "CONVENE_LEASE_MARGIN": "1", "CONVENE_SWEEP_INTERVAL": "1",
            "CONVENE_SWEEP_STALE_SECONDS": "2"}


def test_killed_worker_mid_turn_loses_and_doubles_nothing(stack_factory, tmp_path):
    # Every participant turn takes a while, so the worker can be killed in the middle of one.
    env = slow_scripted_env(tmp_path, turn_seconds=2.0, timeout=6)
    first = stack_factory(extra_env=env, supervise=False)
    owner = make_user()
    room = make_discussion(owner, max_rounds=4)
    do_start_discussion(room)

    def in_second_turn():
        r = Room.objects.get(pk=room.pk)
        return r.round == 1 and r.engine_state.get("phase") == "turn" and leases.held(room.pk)

    wait_for(in_second_turn, timeout=30, interval=0.05)
    time.sleep(0.5)  # the model call is under way
    worker = first.procs["worker"]
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    assert Room.objects.get(pk=room.pk).round == 1
    stack_factory(beat=True, extra_env=env)  # a new worker and the beat sweeper, same Redis and database
    room = wait_for(lambda: finished(room.pk), timeout=90)
    assert room.status == "concluded" and room.round == 4
    assert_clean_transcript(room)
    assert Invocation.objects.filter(room=room, component="participant.turn", success=True).count() == 4


def test_redis_restart_mid_discussion_loses_nothing(stack_factory, tmp_path):
    env = slow_scripted_env(tmp_path, turn_seconds=1.0, timeout=5)
    runtime = stack_factory(beat=True, extra_env=env)
    worker_pid = runtime.procs["worker"].pid
    owner = make_user()
    room = make_discussion(owner, max_rounds=4)
    do_start_discussion(room)
    wait_for(lambda: Room.objects.get(pk=room.pk).round >= 1, timeout=30)
    wait_for(lambda: leases.held(room.pk), timeout=30, interval=0.05)  # a task is in flight, its message unacknowledged
    # Redis goes away with everything queued in it (the bundled server keeps nothing on disk).
    runtime.redis.stop()
    time.sleep(2.0)
    runtime.redis.start()
    room = wait_for(lambda: finished(room.pk), timeout=90)
    assert room.status == "concluded" and room.round == 4
    assert_clean_transcript(room)
    # The worker reconnected instead of stopping (a task in flight may still carry its room to the end
    # meanwhile) and being started again by its supervisor: the same process runs the next discussion.
    after = make_discussion(owner, max_rounds=2)
    do_start_discussion(after)
    assert wait_for(lambda: finished(after.pk), timeout=60).status == "concluded"
    assert runtime.procs["worker"].pid == worker_pid and runtime.procs["worker"].poll() is None
    assert runtime.restarts.get("worker", 0) == 0
