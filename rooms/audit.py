"""The audit row every write leaves: one ``Invocation`` per change, with a correlation id.

Actions call ``audit`` inside their transaction, so the row exists exactly when the change
does. A chain of actions taken for one request (a PATCH that edits a room and then starts
it, a task that ends a round and writes its narrative) shares one correlation id: wrap the
chain in ``with correlation():`` and every ``audit`` inside takes the same id. Outside such
a block each row gets a fresh id, unless one is passed.

Model calls write their own, richer Invocation rows (tokens, cost, latency) in the engine's
commit; they take the step's correlation id.
"""
import contextvars
import uuid
from contextlib import contextmanager

from rooms import rows
from rooms.models import Invocation

_current: contextvars.ContextVar[str | None] = contextvars.ContextVar("convene_correlation_id", default=None)


def new_correlation_id() -> str:
    return uuid.uuid4().hex


def current_correlation_id() -> str | None:
    """The id of the enclosing ``correlation()`` block, if any."""
    return _current.get()


@contextmanager
def correlation(correlation_id: str | None = None):
    """Give every ``audit`` inside the block one correlation id (the enclosing one when nested)."""
    value = correlation_id or _current.get() or new_correlation_id()
    token = _current.set(value)
    try:
        yield value
    finally:
        _current.reset(token)


def _json_safe(value):
    """Before/after snapshots hold plain JSON: ids for rows, text for decimals and dates."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_json_safe(v) for v in value]
    if hasattr(value, "pk"):
        return value.pk
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def record(component: str, *, room=None, user=None, data: dict | None = None, output: str = "", success: bool = True,
           error: str = "", correlation_id: str | None = None, agent=None) -> Invocation:
    """Write one audit row: ``component`` is what happened (``area.verb``), ``room`` the room (or its
    id) it happened in, ``user`` who asked, ``data`` the facts (plain JSON), ``output`` what was said."""
    return rows.create(
        Invocation, room_id=getattr(room, "pk", room), user_id=getattr(user, "pk", None) if user is not None else None,
        agent_id=getattr(agent, "pk", agent), kind=Invocation.Kind.ACTION, component=component, input=_json_safe(data or {}),
        output=output[:4000], success=success, error=error[:2000],
        correlation_id=correlation_id or _current.get() or new_correlation_id(),
    )


def audit(room, actor, component: str, *, before=None, after=None, correlation_id: str | None = None,
          agent=None) -> Invocation:
    """Write the audit row of one change, as ``before``/``after`` snapshots.

    ``room`` is the room changed (None for the catalog, accounts, or a room being deleted:
    its rows go with it, so name it in ``before``); ``actor`` the user who asked (None for
    the system); ``component`` what happened, ``area.verb`` (``room.create``,
    ``lifecycle.pause``, ``catalog.agent_update``...); ``before``/``after`` what changed.
    """
    data = {}
    if before is not None:
        data["before"] = before
    if after is not None:
        data["after"] = after
    return record(component, room=room, user=actor, data=data, correlation_id=correlation_id, agent=agent)
