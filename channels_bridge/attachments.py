"""Files sent after a delivery's text, rendered at send time from what the delivery names."""
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
