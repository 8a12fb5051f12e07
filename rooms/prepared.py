"""Read queries of a fixed shape, compiled by the ORM once and then only run.

The engine asks the same few questions at every step (the seats of a room, its latest turns). The
ORM rebuilds and compiles such a query each time, which costs more than running it. ``Prepared``
compiles the query once per thread (a compiler belongs to a connection) with stand-in values for its
arguments, remembers where they sit among the parameters, and then runs the SQL with the real ones;
the rows go through the ORM's own converters (JSON, decimals, dates; looked up once too), so the result is the list of
dicts ``.values()`` would give, or, for a queryset of one model's rows (no ``.values()``, no
``select_related``), the model instances it would give.

Only for querysets whose arguments are ids or sequence numbers (big integers) that appear once each
among the query's parameters: ``Prepared`` checks that when it compiles. A ``select_for_update()``
query is first run inside a transaction (it cannot be compiled outside one).
"""
import threading
from typing import Callable

from django.db import connections
from django.db.models import QuerySet

from rooms import statements

# Stand-ins for the arguments while compiling: large positive ids, inside the range of every big integer
# column (the ORM drops a condition it can prove always true or false, e.g. a negative value against a
# positive field, and then the argument would have no parameter to go to).
_STAND_INS = tuple(7 * 10**15 + 7919 * i for i in range(8))


class Prepared:
    def __init__(self, build: Callable[..., QuerySet], arity: int):
        if not 0 < arity <= len(_STAND_INS):
            raise ValueError("A prepared query takes 1 to 8 integer arguments.")
        self.build, self.arity = build, arity
        self._local = threading.local()

    def _compiled(self):
        compiled = getattr(self._local, "compiled", None)
        if compiled is None:
            queryset = self.build(*_STAND_INS[: self.arity])
            compiler = queryset.query.get_compiler(queryset.db)
            sql, params = compiler.as_sql()
            params = list(params)
            positions = []
            for stand_in in _STAND_INS[: self.arity]:
                if params.count(stand_in) != 1:
                    raise ValueError("Each argument of a prepared query must appear once among its parameters.")
                positions.append(params.index(stand_in))
            query = queryset.query
            model = None
            if query.values_select or query.extra_select or query.annotation_select:
                names = [*query.extra_select, *query.values_select, *query.annotation_select]
            else:  # the model's own rows: the columns of its fields, in the compiler's order
                if query.select_related:
                    raise ValueError("A prepared query of model rows cannot follow relations.")
                model, names = query.model, [col.target.attname for col, _, _ in compiler.select]
            selected = [column for column, _, _ in compiler.select[: compiler.col_count]]
            converters = tuple((position, tuple(convs), expression)
                               for position, (convs, expression) in compiler.get_converters(selected).items())
            compiled = self._local.compiled = (sql, params, positions, names, converters, compiler.connection, queryset.db, model)
        return compiled

    def __call__(self, *args: int) -> list:
        compiled = self._compiled()
        rows = self._fetch(compiled, args)
        return [_made(row, compiled) for row in rows]

    def raw(self, *args: int) -> list[tuple]:
        """The rows as the database gives them, before any conversion (``convert`` makes one what the query
        gives): a caller that keeps what it made of a row knows an unchanged row by comparing these."""
        return self._fetch(self._compiled(), args)

    def names(self) -> list[str]:
        """What each value of a row is, in order: the names ``.values()`` gives, or the model's field attributes."""
        return list(self._compiled()[3])

    def convert(self, row: tuple):
        """One row of ``raw`` as the query gives it: a dict of ``.values()``, or a model instance."""
        return _made(row, self._compiled())

    @staticmethod
    def _fetch(compiled: tuple, args: tuple) -> list[tuple]:
        sql, params, positions, _, _, _, alias, _ = compiled
        params = list(params)
        for position, value in zip(positions, args):
            params[position] = int(value)
        return statements.fetch(connections[alias], sql, params)


def _made(row: tuple, compiled: tuple):
    _, _, _, names, converters, connection, alias, model = compiled
    if converters:  # what the compiler's apply_converters does, with the converters found once
        row = _converted(list(row), converters, connection)
    if model is not None:
        return model.from_db(alias, names, tuple(row))
    return dict(zip(names, row))


def _converted(row: list, converters: tuple, connection) -> list:
    for position, convs, expression in converters:
        value = row[position]
        for converter in convs:
            value = converter(value, expression, connection)
        row[position] = value
    return row
