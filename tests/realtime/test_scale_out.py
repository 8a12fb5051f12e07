"""Scale-out as production runs it: two web processes and two workers on one Redis and one database.

A client connected to one web process receives every event of a discussion whose steps run on
either worker, and a control sent through either web process reaches both clients.
"""
import asyncio
import json

import pytest
import requests

from rooms.models import RoomEvent
from tests.factories import make_discussion, make_user
from tests.realtime.conftest import Recorder, api_token, run_async, until

pytestmark = pytest.mark.worker


def test_two_web_processes_and_two_workers_share_one_discussion(stack_factory, settings, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"purpose": "contribution", "delay": 0.4, "text": "Turn of {speaker} in round {round}."}]))
    env = {"LLM_PROVIDER": "scripted", "CONVENE_SCRIPT_FILE": str(script)}
    web_a = stack_factory(web=True, extra_env=env)
    web_b = stack_factory(web=True, extra_env=env)  # same Redis (the first stack's), its own worker
    settings.REALTIME_BACKEND = "redis"
    assert web_a.base_url != web_b.base_url and web_a.redis_url == web_b.redis_url

    owner = make_user("owner")
    room = make_discussion(owner, max_rounds=20)
    token = api_token(owner)
    before = room.seq  # the creation's event, stored before anyone joined

    async def scenario():
        on_a = await Recorder(web_a.base_url, token=token).connect()
        on_b = await Recorder(web_b.base_url, token=token).connect()
        for client in (on_a, on_b):
            assert (await client.call("discussion:join", {"discussionId": room.pk}))["ok"]
        # Started over HTTP through web B; the steps run on whichever worker takes them.
        started = await asyncio.to_thread(
            requests.post, f"{web_b.base_url}/api/discussions/{room.pk}/start",
            headers={"Authorization": f"Token {token}"}, timeout=15)
        assert started.status_code == 200, started.text
        await until(lambda: len([e for e in on_a.events if e["type"] == "discussion:turn"]) >= 2, timeout=45)
        paused = await on_a.call("discussion:pause", {"discussionId": room.pk})  # control through web A
        assert paused["ok"] and paused["status"] == "paused"
        await until(lambda: any(e["type"] == "discussion:status" and e["status"] == "paused" for e in on_b.events))
        resumed = await on_b.call("discussion:resume", {"discussionId": room.pk})  # and through web B
        assert resumed["ok"]
        count = len([e for e in on_a.events if e["type"] == "discussion:turn"])
        await until(lambda: len([e for e in on_a.events if e["type"] == "discussion:turn"]) > count, timeout=30)
        stopped = await on_b.call("discussion:stop", {"discussionId": room.pk})
        assert stopped["ok"] and stopped["status"] == "stopped"
        await until(lambda: any(e["type"] == "discussion:status" and e["status"] == "stopped" for e in on_a.events))
        await asyncio.sleep(0.5)
        for client in (on_a, on_b):
            await client.close()
        return on_a.seqs(), on_b.seqs()

    seqs_a, seqs_b = run_async(scenario())
    stored = list(RoomEvent.objects.filter(room_id=room.pk, seq__gt=before).order_by("seq").values_list("seq", flat=True))
    assert len(stored) >= 6
    # Each client saw every event stored since it joined once, in order, whichever process wrote or relayed it.
    assert seqs_a == sorted(set(seqs_a)) and seqs_b == sorted(set(seqs_b))
    assert set(seqs_a) == set(seqs_b) == set(stored)
