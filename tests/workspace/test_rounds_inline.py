"""Whole workspace rounds in this process (inline scheduling) on the offline rehearsal model."""
import pytest

from facilitation.runs import leases
from facilitation.runs.runner import run_step
from facilitation.runs.scheduling import inline
from facilitation.workspace.actions.lifecycle import do_start_workspace
from facilitation.workspace.actions.narratives import do_edit_narrative
from facilitation.workspace.actions.rounds import do_end_round
from facilitation.workspace.actions.tasks import do_create_task
from rooms.models import Invocation, Narrative, Observation, PersonaAdaptation, TaskAssignment, Turn
from tests.factories import make_user
from tests.workspace.helpers import agent_seats, make_workspace, run_round_work


@pytest.fixture
def manager(db):
    return make_user("manager")


def test_a_round_on_rehearsal_writes_typed_threaded_observations(manager):
    with inline():
        room = make_workspace(manager)
        do_start_workspace(room, manager)
        ran = run_round_work(room)
    assert [(r.step, r.outcome) for r in ran] == [("workspace.agent", "committed")] * 3
    obs = list(Observation.objects.filter(room=room).exclude(event_type="").order_by("seq"))
    assert len(obs) == 6 and {o.event_type for o in obs} >= {"question", "blocker", "solution"}
    assert all(o.provider == "rehearsal" and o.round == 1 and 0 <= o.confidence <= 1 for o in obs)
    assert any(w in obs[0].content.lower() for w in ("billing", "invoices", "migration", "queue"))  # topic-aware
    # Running a seat's slot again (a redelivered task) writes nothing more.
    step = leases.current(room.pk)
    assert run_step(room.pk, step.step_seq, slot=0).outcome == "not_claimable"
    assert Observation.objects.filter(room=room).exclude(event_type="").count() == 6


def test_end_round_writes_the_narrative_and_round_two_sees_it(manager):
    with inline():
        room = make_workspace(manager)
        do_start_workspace(room, manager)
        run_round_work(room)
        seat = agent_seats(room)[1]
        task = do_create_task(room, manager, title="Draft the outbox schema", priority=5, assignee_id=seat.pk)
        do_end_round(room, manager)
        run_round_work(room)
        narrative = Narrative.objects.get(room=room, round=1)
        assert narrative.generated_content and narrative.version == 1
        assert set(narrative.blockers) <= set(Observation.objects.filter(room=room, event_type="blocker").values_list("pk", flat=True))
        do_edit_narrative(room, narrative.pk, manager, content=narrative.content + " The manager adds: ship by Friday.",
                          version=1)
    round2 = Observation.objects.filter(room=room, round=2).exclude(event_type="")
    assert round2.count() >= 3
    # Round 2's prompts carried round 1's narrative.
    works = Invocation.objects.filter(room=room, component="agent.round_work", input__round=2)
    assert works.count() == 3
    task.refresh_from_db()
    assert task.status == TaskAssignment.Status.CLAIMED and task.claimed_by_id == seat.pk
    assert Invocation.objects.filter(room=room, component="agent.claim_task").count() == 1
    # One chain per round: round start, publications, narrative.
    chain = Turn.objects.get(room=room, number=1).correlation_id
    comps = set(Invocation.objects.filter(room=room, correlation_id=chain).values_list("component", flat=True))
    assert {"round.start", "agent.round_work", "tool.publish_observation", "tool.discovery", "manager.end_round",
            "narrative.generate", "manager.edit_narrative", "adaptation.learn"} <= comps
    # Round 2's agents ran with round 1's narrative in their context.
    assert all(w.input["narrative"]["round"] == 1 for w in works)


def test_adaptation_learns_per_agent_persona_from_signals(manager):
    with inline():
        room = make_workspace(manager)
        do_start_workspace(room, manager)
        run_round_work(room)
        do_end_round(room, manager)
        run_round_work(room)
        n1 = Narrative.objects.get(room=room, round=1)
        do_edit_narrative(room, n1.pk, manager, content="Rewritten entirely by the manager.", version=1)
        do_end_round(room, manager)
        run_round_work(room)
    rows = PersonaAdaptation.objects.filter(room=room)
    assert rows.count() == 3
    for row in rows:
        assert row.rounds_learned == 2 and row.last_round == 2 and row.version == 3
        assert sum(row.observation_counts.values()) == Observation.objects.filter(
            room=room, seat__agent_id=row.agent_id, round__in=(1, 2)).exclude(event_type="").count()
        # Round 2 saw a heavily edited narrative: trust fell below its start.
        assert row.learned_thresholds["narrativeTrust"] < 1.0
