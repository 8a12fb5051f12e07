"""The audit row every action leaves: an ``Invocation`` with a correlation id."""
import uuid

from rooms.models import Invocation


def new_correlation_id() -> str:
    return uuid.uuid4().hex


def audit(component: str, *, room=None, user=None, input: dict | None = None, output: str = "", success: bool = True,
          error: str = "", correlation_id: str | None = None) -> Invocation:
    """Write the audit row of an action (inside the action's transaction)."""
    return Invocation.objects.create(
        room_id=getattr(room, "pk", room), user=user if getattr(user, "is_authenticated", False) else None,
        component=component, input=input or {}, output=output[:4000], success=success, error=error[:2000],
        correlation_id=correlation_id or new_correlation_id(),
    )
