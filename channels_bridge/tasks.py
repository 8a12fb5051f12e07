"""The bridge's Celery tasks (queue ``bridge``): inbound updates, outbound deliveries, the sweeper."""
import logging
from datetime import timedelta

from celery import shared_task
from django.db import InterfaceError, OperationalError
from django.utils import timezone

log = logging.getLogger("convene.bridge")

RETRY_DB = {"autoretry_for": (OperationalError, InterfaceError), "retry_backoff": 0.5, "retry_backoff_max": 10,
            "retry_jitter": True, "max_retries": 20}


@shared_task(name="bridge.process_update", acks_late=True, reject_on_worker_lost=True, soft_time_limit=120, time_limit=150,
             **RETRY_DB)
def process_update_task(inbound_id: int, **kwargs) -> str:
    from channels_bridge.processing import process_update

    return process_update(inbound_id)


@shared_task(name="bridge.send_delivery", acks_late=True, reject_on_worker_lost=True, soft_time_limit=120, time_limit=150,
             **RETRY_DB)
def send_delivery_task(delivery_id: int, **kwargs) -> str:
    from channels_bridge.sender import send_delivery

    again = send_delivery(delivery_id)
    if again is not None:
        send_delivery_task.apply_async((delivery_id,), countdown=again, queue="bridge")
        return f"again in {again:.2f} s"
    return "done"


@shared_task(name="bridge.sweep", acks_late=True, time_limit=60)
def sweep_task(**kwargs) -> dict:
    """Re-enqueue work whose task was lost: due deliveries and updates received but not processed."""
    from channels_bridge.models import InboundUpdate
    from rooms.actions.deliveries import stranded_deliveries

    due = stranded_deliveries()
    for pk in due:
        send_delivery_task.apply_async((pk,), queue="bridge")
    now = timezone.now()
    # Received but never picked up (a lost enqueue), or picked up by a worker that died meanwhile
    # (processing again is safe: a chat message is recorded once per chat and message id).
    InboundUpdate.objects.filter(status=InboundUpdate.Status.PROCESSING, processed_at__lt=now - timedelta(minutes=10)).update(
        status=InboundUpdate.Status.RECEIVED)
    inbound = list(InboundUpdate.objects.filter(status=InboundUpdate.Status.RECEIVED, received_at__lt=now - timedelta(seconds=60))
                   .values_list("pk", flat=True)[:500])
    for pk in inbound:
        process_update_task.apply_async((pk,), queue="bridge")
    return {"deliveries": len(due), "updates": len(inbound)}
