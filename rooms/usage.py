"""Adding a model call's usage (tokens and cost) to the counters of a room, an agent or a seat.

One UPDATE per counter row, adding to what is there (never read-modify-write), so concurrent
calls add up. The statement is built once per table: it runs after every model call.
"""
from decimal import Decimal
from functools import lru_cache

from django.db import connection


@lru_cache(maxsize=None)
def _sql(table: str) -> str:
    q = connection.ops.quote_name
    return (f"UPDATE {q(table)} SET {q('tokens_used')} = {q('tokens_used')} + %s, "
            f"{q('cost_usd')} = {q('cost_usd')} + %s WHERE {q('id')} = %s")


def add_usage(model, pk: int | None, tokens: int, cost_usd) -> None:
    """Add ``tokens`` and ``cost_usd`` to row ``pk`` of ``model`` (a model with both counters)."""
    if not pk or not (tokens or cost_usd):
        return
    with connection.cursor() as cursor:
        cursor.execute(_sql(model._meta.db_table), [int(tokens), Decimal(cost_usd or 0), pk])
