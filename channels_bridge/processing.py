"""Processing one stored inbound update, once (in the bridge's worker)."""
import logging

from django.db import transaction
from django.utils import timezone

from channels_bridge import bots, inbound
from channels_bridge.models import InboundUpdate
from rooms.audit import new_correlation_id

log = logging.getLogger("convene.bridge")


def _claim(inbound_id: int) -> InboundUpdate | None:
    """Only one worker processes an update: the status flips from received exactly once."""
    with transaction.atomic():
        row = InboundUpdate.objects.select_for_update().filter(pk=inbound_id).first()
        if row is None or row.status != InboundUpdate.Status.RECEIVED:
            return None
        row.status = InboundUpdate.Status.PROCESSING
        row.processed_at = timezone.now()
        row.save(update_fields=["status", "processed_at"])
        return row


def _finish(row: InboundUpdate, status: str, note: str) -> None:
    InboundUpdate.objects.filter(pk=row.pk).update(status=status, note=note[:300], processed_at=timezone.now())


def process_update(inbound_id: int) -> str:
    row = _claim(inbound_id)
    if row is None:
        return "already processed"
    correlation = new_correlation_id()
    try:
        if row.platform == "telegram":
            from channels_bridge.telegram.parse import parse_update

            own_id, username = bots.telegram_identity()
            events = parse_update(row.payload, own_id, username)
        else:
            from channels_bridge.teams.parse import parse_activity

            events = parse_activity(row.payload)
            recipient = row.payload.get("recipient") or {}
            own_id = str(recipient.get("id") or "")
            bots.note_teams_bot(own_id, str(recipient.get("name") or ""))
        notes = inbound.handle(events, own_id, correlation)
    except Exception as exc:
        log.exception("inbound update %s failed", row.pk)
        _finish(row, InboundUpdate.Status.FAILED, f"{type(exc).__name__}: {exc}")
        raise
    note = "; ".join(notes) or "nothing to do"
    _finish(row, InboundUpdate.Status.PROCESSED if notes else InboundUpdate.Status.IGNORED, note)
    return note
