"""The seed's Phase 1 scenario through the real worker path: bundled Redis, a Celery worker process,
the test database, the offline rehearsal model."""
import pytest

from facilitation.workspace.actions.lifecycle import do_pause_workspace, do_resume_workspace, do_start_workspace
from facilitation.workspace.actions.narratives import do_edit_narrative
from facilitation.workspace.actions.rounds import do_end_round
from rooms.models import Invocation, Narrative, Observation, Room, Turn
from tests.factories import make_user
from tests.waiting import wait_for
from tests.workspace.helpers import agent_seats, make_workspace

pytestmark = pytest.mark.worker


def typed(room, number):
    return Observation.objects.filter(room=room, round=number).exclude(event_type="")


def test_phase_one_scenario_through_the_worker(live_worker):
    manager = make_user("manager")
    room = make_workspace(manager, agents=3)
    seats = agent_seats(room)

    # The manager starts: every agent seat works concurrently, one task each.
    do_start_workspace(room, manager)
    wait_for(lambda: typed(room, 1).count() >= 6 or None, timeout=60)
    obs = list(typed(room, 1).order_by("seq"))
    assert len(obs) == 6 and {"question", "blocker", "solution"} <= {o.event_type for o in obs}
    assert {o.seat_id for o in obs} == {s.pk for s in seats}

    # Pause so the next round waits for the manager's review of the narrative.
    do_pause_workspace(room, manager)
    do_end_round(room, manager)
    narrative = wait_for(lambda: Narrative.objects.filter(room=room, round=1).first(), timeout=60)
    assert narrative.generated_content and narrative.provider == "rehearsal"
    edited = narrative.content + "\nManager: the outbox ships first; cron stays until invoices match for a week."
    do_edit_narrative(room, narrative.pk, manager, content=edited, version=narrative.version)
    edit = Invocation.objects.get(room=room, component="manager.edit_narrative")
    assert edit.input["before"]["content"] == narrative.generated_content and edit.input["after"]["content"] == edited

    # Round 2 begins with that narrative in every agent's context.
    do_resume_workspace(room, manager)
    works = lambda: Invocation.objects.filter(room=room, component="agent.round_work", input__round=2)  # noqa: E731
    wait_for(lambda: works().count() == 3 or None, timeout=60)
    assert all(w.input["narrative"] == {"round": 1, "version": 2} for w in works())

    # Every invocation carries its chain's correlation id; the state is consistent.
    chains = dict(Turn.objects.filter(room=room).values_list("number", "correlation_id"))
    assert Invocation.objects.filter(room=room, correlation_id="").count() == 0
    round1 = set(Invocation.objects.filter(room=room, correlation_id=chains[1]).values_list("component", flat=True))
    assert {"round.start", "tool.discovery", "agent.round_work", "tool.publish_observation", "manager.end_round",
            "narrative.generate", "manager.edit_narrative", "adaptation.learn"} <= round1
    assert Invocation.objects.filter(room=room, component="tool.publish_observation", correlation_id=chains[1]).count() == 6
    room = Room.objects.get(pk=room.pk)
    assert room.status == "active" and room.round == 2
    turn1 = Turn.objects.get(room=room, number=1)
    assert turn1.ended_by == "manager" and turn1.event_count == 6
    assert set(turn1.agent_states) == {str(s.pk) for s in seats}
    seqs = list(Observation.objects.filter(room=room).values_list("seq", flat=True))
    assert len(seqs) == len(set(seqs))


def test_a_killed_worker_mid_round_loses_and_doubles_nothing(stack_factory, tmp_path):
    """The worker dies while every agent's model call is under way: the beat sweeper sends their slots
    again once the leases expire, and each seat's round is committed exactly once."""
    import json
    import os
    import signal
    import time

    from facilitation.runs import leases

    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"purpose": "workspace.observations", "delay": 2.0,
         "text": '{"observations": [{"type": "analysis", "content": "{speaker}: the outbox comes first.", "confidence": 0.7}]}'},
        {"text": "{}"}]))
    env = {"LLM_PROVIDER": "scripted", "CONVENE_SCRIPT_FILE": str(script), "CONVENE_PARTICIPANT_TIMEOUT": "6",
           "CONVENE_FACILITATOR_TIMEOUT": "6", "CONVENE_STEP_LEASE": "3", "CONVENE_SWEEP_INTERVAL": "1",
           "CONVENE_SWEEP_STALE_SECONDS": "2"}
    first = stack_factory(extra_env=env, supervise=False)
    manager = make_user("manager")
    room = make_workspace(manager, agents=3)
    do_start_workspace(room, manager)
    wait_for(lambda: leases.held(room.pk) or None, timeout=30, interval=0.05)
    time.sleep(0.5)  # the agents' model calls are under way
    worker = first.procs["worker"]
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    assert typed(room, 1).count() == 0
    stack_factory(beat=True, extra_env=env)  # a new worker and the beat sweeper, same Redis and database
    wait_for(lambda: typed(room, 1).count() >= 3 or None, timeout=60)
    time.sleep(2)  # anything sent twice would have committed by now
    obs = list(typed(room, 1))
    assert len(obs) == 3 and sorted(o.seat_id for o in obs) == sorted(s.pk for s in agent_seats(room))
    assert Invocation.objects.filter(room=room, component="agent.round_work", success=True).count() == 3
