"""Celery tasks of workspace rooms: one agent seat's round each, a round's close, the round clock."""
from celery import shared_task
from django.db import InterfaceError, OperationalError

STEP_TIME_LIMIT = 600
RETRY = {"autoretry_for": (OperationalError, InterfaceError), "retry_backoff": 0.5, "retry_backoff_max": 10,
         "retry_jitter": True, "max_retries": None}


@shared_task(name="facilitation.workspace.agent_round", acks_late=True, reject_on_worker_lost=True,
             soft_time_limit=STEP_TIME_LIMIT, time_limit=STEP_TIME_LIMIT + 30, **RETRY)
def agent_round_task(room_id: int, number: int, seat_id: int, **kwargs):
    from facilitation.workspace.work import run_agent_round

    return run_agent_round(room_id, number, seat_id)


@shared_task(name="facilitation.workspace.close_round", acks_late=True, reject_on_worker_lost=True,
             soft_time_limit=STEP_TIME_LIMIT, time_limit=STEP_TIME_LIMIT + 30, **RETRY)
def close_round_task(room_id: int, number: int, **kwargs):
    from facilitation.workspace.work import run_round_close

    return run_round_close(room_id, number)


@shared_task(name="facilitation.workspace.round_timeout", acks_late=True, time_limit=60, **RETRY)
def round_timeout_task(room_id: int, number: int, **kwargs):
    from facilitation.workspace.work import run_round_timeout

    return run_round_timeout(room_id, number)
