"""The step registry and the runner: a room kind with parallel slots registers its planner and
handlers and runs on the same exactly-once mechanism as discussions, without touching the runner."""
import pytest
from django.db import transaction

from facilitation.actions import lifecycle
from facilitation.actions.steps import CallRecord, _record_call
from facilitation.llm import TransientLLMError
from facilitation.llm.base import LLMRequest, LLMResponse, Provider
from facilitation.runs import calls, leases, registry
from facilitation.runs.registry import Planned, StepResult
from facilitation.runs.runner import run_step
from facilitation.runs.scheduling import inline, schedule
from rooms.models import Invocation, Room
from tests.factories import make_discussion, make_user

pytestmark = pytest.mark.django_db

KIND = "test-round"


class Agents(Provider):
    """A model answering every agent at once, or failing transiently the first ``fail`` times."""

    name = "scripted"

    def __init__(self):
        self.fail = 0
        self.asked = []

    def complete(self, request):
        self.asked.append(request.meta["slot"])
        if self.fail:
            self.fail -= 1
            raise TransientLLMError("overloaded")
        return LLMResponse(text=f"agent {request.meta['slot']} observes", provider="scripted", model="scripted", output_tokens=3)


MODEL = Agents()


class Agent:
    kind = "test.agent"


class Close:
    kind = "test.close"


def plan(room):
    """Three agents at once (one slot each), then a closing step."""
    step = leases.current(room.pk)
    return Planned(step=Agent() if step.slots > 1 else Close())


def observe(run) -> StepResult:
    slot = run.claim.slot
    request = LLMRequest(system="s", messages=[{"role": "user", "content": "go"}], purpose="observe", meta={"slot": slot})
    component = f"test.agent{slot}"
    outcome = calls.call_or_retry(run, MODEL, request, 5, on_retry=lambda error: _record_call(
        None, run.claim.room_id, CallRecord(component=component, success=False, error=error), run.claim.correlation))
    if outcome.retry:
        return outcome.retry
    with transaction.atomic():
        room = Room.objects.select_for_update().get(pk=run.room.pk)
        finished = leases.finish(run.claim)
        if finished is None:
            return StepResult("lost_lease", step=Agent.kind)
        _record_call(room, room.pk, CallRecord(component=component, success=not outcome.error, error=outcome.error,
                                               output=outcome.response.text if outcome.response else ""), run.claim.correlation)
        schedule(room.pk, finished.next)
    return StepResult("committed", step=Agent.kind)


def close(run) -> StepResult:
    with transaction.atomic():
        if leases.locked_if_ours(run.claim) is None:
            return StepResult("lost_lease", step=Close.kind)
        Room.objects.filter(pk=run.room.pk).update(status=Room.Status.CONCLUDED)
    return StepResult("committed", step=Close.kind)


registry.register_planner(KIND, plan)
registry.register_handler(Agent.kind, observe)
registry.register_handler(Close.kind, close)


@pytest.fixture
def round_of_three(settings):
    settings.CONVENE = {**settings.CONVENE, "RETRY_BACKOFF_SECONDS": 0}
    MODEL.fail, MODEL.asked = 0, []
    room = make_discussion(make_user())
    Room.objects.filter(pk=room.pk).update(kind=KIND)
    with inline():
        lifecycle.do_start_discussion(room)
        with transaction.atomic():
            opened = leases.open_step(room.pk, slots=3)
    return room, opened


def test_the_app_registers_the_discussion_steps():
    known = registry.registered()
    assert "discussion" in known["planners"]
    assert {"opening", "evaluation", "turn", "synthesis"} <= set(known["handlers"])


def test_a_round_of_agents_commits_each_slot_once(round_of_three):
    room, opened = round_of_three
    with inline():
        results = [run_step(room.pk, opened.step_seq, slot=slot) for slot in (2, 0, 1)]
        assert [r.outcome for r in results] == ["committed"] * 3
        # Running any slot again (a redelivered task) writes nothing.
        assert all(run_step(room.pk, opened.step_seq, slot=s).outcome == "not_claimable" for s in range(3))
        components = sorted(Invocation.objects.filter(room=room, kind=Invocation.Kind.CALL).values_list("component", flat=True))
        assert components == ["test.agent0", "test.agent1", "test.agent2"] and sorted(MODEL.asked) == [0, 1, 2]
        after = leases.current(room.pk)
        assert (after.step_seq, after.slots) == (opened.step_seq + 1, 1)
        assert run_step(room.pk, after.step_seq).step == "test.close"
    assert Room.objects.get(pk=room.pk).status == Room.Status.CONCLUDED


def test_a_transient_failure_retries_only_that_slot(round_of_three):
    room, opened = round_of_three
    MODEL.fail = 1
    with inline():
        first = run_step(room.pk, opened.step_seq, slot=1)
        assert first.outcome == "retry" and first.retry_in == 0
        assert not leases.held(room.pk)
        assert run_step(room.pk, opened.step_seq, slot=0).outcome == "committed"
        assert run_step(room.pk, opened.step_seq, slot=1).outcome == "committed"
    rows = list(Invocation.objects.filter(room=room, component="test.agent1").values_list("success", flat=True))
    assert rows == [False, True]


def test_attempts_run_out_and_the_failure_is_committed(round_of_three):
    room, opened = round_of_three
    MODEL.fail = calls.MAX_ATTEMPTS
    with inline():
        outcomes = [run_step(room.pk, opened.step_seq, slot=0).outcome for _ in range(calls.MAX_ATTEMPTS)]
    assert outcomes == ["retry"] * (calls.MAX_ATTEMPTS - 1) + ["committed"]
    last = Invocation.objects.filter(room=room, component="test.agent0").last()
    assert not last.success and last.error == "overloaded"


def test_backoff_doubles_from_the_configured_base(settings):
    settings.CONVENE = {**settings.CONVENE, "RETRY_BACKOFF_SECONDS": 1.0}
    assert all(1.0 <= calls.backoff(1) <= 2.0 for _ in range(20))
    assert all(15.0 <= calls.backoff(10) <= 30.0 for _ in range(20))
    settings.CONVENE = {**settings.CONVENE, "RETRY_BACKOFF_SECONDS": 0}
    assert calls.backoff(2) == 0
