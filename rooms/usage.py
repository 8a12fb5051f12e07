"""Adding a model call's usage (tokens and cost) to the counters of a room, an agent or a seat.

One UPDATE per counter row, adding to what is there (never read-modify-write), so concurrent
calls add up. The statement is built once per table: it runs after every model call.
"""
from decimal import Decimal
from functools import lru_cache

from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.utils import timezone

from rooms import statements
from rooms.models import Room


@lru_cache(maxsize=None)
def _sql(model) -> tuple[str, bool]:
    """The UPDATE, and whether it also stamps the row's ``updated_at``: a room's does (every write of a room
    moves its ``updated_at`` or ``seq``, and a step's commit relies on that to know the room it read is still
    the room, ``facilitation.runs.leases.locked_room``)."""
    q = connection.ops.quote_name
    stamped = model is Room
    stamp = f", {q('updated_at')} = %s" if stamped else ""
    return (f"UPDATE {q(model._meta.db_table)} SET {q('tokens_used')} = {q('tokens_used')} + %s, "
            f"{q('cost_usd')} = {q('cost_usd')} + %s{stamp} WHERE {q('id')} = %s"), stamped


def add_usage(model, pk: int | None, tokens: int, cost_usd) -> None:
    """Add ``tokens`` and ``cost_usd`` to row ``pk`` of ``model`` (a model with both counters)."""
    if not pk or not (tokens or cost_usd):
        return
    sql, stamped = _sql(model)
    db = connections[DEFAULT_DB_ALIAS]
    params = [int(tokens), Decimal(cost_usd or 0)]
    if stamped:
        params.append(statements.at(db, timezone.now()))
    statements.write(db, sql, [*params, pk])
