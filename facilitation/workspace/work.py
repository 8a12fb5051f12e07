"""Running one piece of workspace work end to end: an agent seat's round, a round's close, the clock.

Exactly once: a seat's round commits only if no commit for that (round, seat) exists yet, checked
under the room's row lock in the commit's transaction; a narrative has a unique (room, round).
A redelivered or duplicated task therefore never writes twice (it may call the model again).
"""
from django.conf import settings

from facilitation.llm import TerminalLLMError
from facilitation.runs.calls import Abandoned, StepTimeout, call_model
from facilitation.workspace import rounds
from facilitation.workspace.actions.rounds import end_round_on_timeout
from rooms.models import Invocation, Room


def _timeouts() -> tuple[float, float]:
    cfg = settings.CONVENE
    return float(cfg["PARTICIPANT_TIMEOUT"]), float(cfg["FACILITATOR_TIMEOUT"])


def _call(provider, request, timeout, keep):
    try:
        return call_model(provider, request, timeout, lambda: not keep())
    except StepTimeout as exc:
        raise TimeoutError(str(exc)) from exc
    except Abandoned as exc:  # the round closed or the room stopped running meanwhile
        raise TerminalLLMError("abandoned: the round is no longer open") from exc


def _not_committed(room_id: int, number: int, seat_id: int, correlation: str) -> bool:
    """No commit of this seat's round yet (a discarded call's invocation does not count)."""
    return not (Invocation.objects.filter(room_id=room_id, component="agent.round_work", correlation_id=correlation,
                                          input__seatId=seat_id, input__round=number)
                .exclude(error__startswith="discarded").exists())


def run_agent_round(room_id: int, number: int, seat_id: int) -> str:
    room = Room.objects.filter(pk=room_id, status=Room.Status.ACTIVE, round=number).first()
    if room is None:
        return "not_runnable"
    timeout, _ = _timeouts()
    work = rounds.prepare_agent(room, number, seat_id, timeout)
    if work is None or not _not_committed(room_id, number, seat_id, work.correlation):
        return "nothing_to_do"

    def keep() -> bool:
        return Room.objects.filter(pk=room_id, round=number, status__in=(Room.Status.ACTIVE, Room.Status.PAUSED)).exists()

    called = rounds.call_provider(work.provider, work.request, keep, timeout, _call)
    ok = rounds.commit_agent(work, called, lambda: _not_committed(room_id, number, seat_id, work.correlation))
    return "committed" if ok else "discarded"


def run_round_close(room_id: int, number: int) -> str:
    room = Room.objects.filter(pk=room_id).first()
    if room is None:
        return "missing"
    rounds.learn_adaptations(room, number)
    _, timeout = _timeouts()
    work = rounds.prepare_close(room, number, timeout)
    if work is None:
        return "nothing_to_do"
    called = rounds.call_provider(work.provider, work.request, lambda: True, timeout, _call)
    narrative = rounds.commit_narrative(work, called, lambda: True)
    return "committed" if narrative is not None else "discarded"


def run_round_timeout(room_id: int, number: int) -> str:
    return "ended" if end_round_on_timeout(room_id, number) else "not_due"


def drain_inline(max_items: int = 1000) -> list[tuple[str, list, str]]:
    """Run what inline mode queued (and what that queues) in this process, in order; what ran."""
    from facilitation.workspace import scheduling

    runners = {scheduling.AGENT_TASK: run_agent_round, scheduling.CLOSE_TASK: run_round_close,
               scheduling.TIMEOUT_TASK: run_round_timeout}
    done = []
    for _ in range(max_items):
        items = scheduling.take_inline()
        if not items:
            break
        for name, args in items:
            done.append((name, args, runners[name](*args)))
    return done
