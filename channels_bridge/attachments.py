"""Files sent after a delivery's text, rendered at send time from what the delivery names."""
from channels_bridge import outcome, ratelimit
from facilitation.goals.minutes import render_run_minutes
from rooms.models import Room


class AttachmentGone(Exception):
    """What the attachment names no longer exists."""


def render(attachment: dict) -> tuple[str, bytes]:
    """(filename, bytes) for ``{"kind": "run_minutes", "roomId", "filename"}``."""
    if attachment.get("kind") != "run_minutes":
        raise AttachmentGone(f"Unknown attachment kind {attachment.get('kind')!r}.")
    room = Room.objects.filter(pk=attachment.get("roomId")).first()
    if room is None:
        raise AttachmentGone("The room of these minutes was deleted.")
    return str(attachment.get("filename") or f"minutes-{room.pk}.docx"), render_run_minutes(room)


def render_part(attachment: dict, sent_ids: list) -> tuple[str, bytes] | outcome.Outcome:
    """The file to send as the part after the text, or, when what it names is gone, how the delivery
    ends: sent (the text went out) or undeliverable (nothing did)."""
    try:
        return render(attachment)
    except AttachmentGone as exc:
        return outcome.sent(sent_ids) if sent_ids else outcome.undeliverable(str(exc))


def paced_part(attachment: dict, sent_ids: list, buckets: list) -> tuple[str, bytes] | outcome.Outcome:
    """``render_part`` once the rate buckets give the file its turn (else: wait and try again)."""
    wait = ratelimit.buckets().take(buckets)
    if wait > 0:
        return outcome.wait(wait)
    return render_part(attachment, sent_ids)
