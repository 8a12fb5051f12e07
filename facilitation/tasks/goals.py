"""The beat sweep of facilitation runs: a passed deadline fails the run; a stall gets a reminder; ended or expired
ephemeral runs are reaped (their protocol kept)."""
from celery import shared_task


@shared_task(name="facilitation.sweep_runs", acks_late=True, time_limit=120)
def sweep_runs(**kwargs) -> dict:
    from facilitation.goals.actions import do_end_at_deadline, do_reap_run, do_remind, overdue_runs, reapable_runs, stalled_runs
    from rooms.errors import StateConflict

    failed = 0
    for room_id in overdue_runs():
        try:
            do_end_at_deadline(room_id)
            failed += 1
        except StateConflict:
            pass
    reminded = sum(do_remind(room_id) for room_id in stalled_runs())
    reaped = sum(do_reap_run(run_id) for run_id in reapable_runs())
    return {"failed": failed, "reminded": reminded, "reaped": reaped}


@shared_task(name="facilitation.read_run_message", bind=True, acks_late=True, max_retries=2, time_limit=120)
def read_run_message(self, room_id: int, seq: int) -> str:
    """A person's turn in a facilitation run, read by the facilitator's model (a tool call)."""
    from facilitation.goals.reading import read_with_model
    from facilitation.llm import TransientLLMError

    try:
        return read_with_model(room_id, seq, last_attempt=self.request.retries >= self.max_retries)
    except TransientLLMError as exc:
        raise self.retry(countdown=min(30.0, exc.retry_after or 2.0 * (self.request.retries + 1)))
