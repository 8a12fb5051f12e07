"""Rows the engine writes at every step, with their SQL built once.

``Model.objects.create`` and ``save(update_fields=...)`` build and compile their statement anew on
every call, which costs a step more than running it. ``insert``, ``insert_all`` and ``update`` write
the same rows: every field's value goes through the field itself (``pre_save``, so ``auto_now`` and
``auto_now_add`` stamp as usual, then ``get_db_prep_save``, so JSON, decimals and dates are adapted
by the backend), and only the SQL text is built once per model (and field list) and connection.

No model signals are sent: the models written here have no receivers (a test checks that). Plain
SQL that SQLite (3.35 or later, for RETURNING) and PostgreSQL both run.
"""
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Callable

from django.db import connections, models, router
from django.db.models import fields as F
from django.db.models.base import ModelState
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.query_utils import DeferredAttribute
from django.db.models.signals import post_init, pre_init

from rooms import statements

#: Fields whose preparation leaves a value of exactly this type (or None) as it is: such a value is
#: written without the calls (``Field.pre_save`` reads the attribute; the ``get_*prep*`` chain
#: returns it unchanged on SQLite and PostgreSQL). Any other value goes through the field.
_KEPT_AS_IS = {F.CharField: str, F.TextField: str, F.BooleanField: bool, F.IntegerField: int,
               F.PositiveIntegerField: int, F.PositiveSmallIntegerField: int, F.SmallIntegerField: int,
               F.BigIntegerField: int, F.PositiveBigIntegerField: int, F.FloatField: float}
#: Text fields also keep a ``str`` subclass as it is (a choices enum member: the ORM passes it on unchanged too).
_TEXT = (F.CharField, F.TextField)
_KEYS = (F.AutoField, F.BigAutoField)
_UNLOADED = object()


def _kept_type(field) -> type | None:
    """The type of value ``field`` writes unchanged, or None: every value goes through the field."""
    if isinstance(field, models.ForeignKey) and type(field) is models.ForeignKey and type(field.target_field) in _KEYS:
        return int
    return _KEPT_AS_IS.get(type(field))


def _adapter(field):
    """For a text, JSON, date-time or decimal field (those exact classes), what its ``get_db_prep_save`` comes to
    for the values a step writes (a choices member; a dict or list; an aware datetime; a finite decimal): the value
    itself or the backend's adaptation, called directly. None for other fields; other values go through the field."""
    if type(field) in _TEXT:
        return lambda value, connection: value if isinstance(value, str) else field.get_db_prep_save(value, connection)
    if type(field) is models.DecimalField:
        # The field turns a decimal into itself (``Decimal(value)``) and refuses one that is not finite.
        return lambda value, connection: (connection.ops.adapt_decimalfield_value(value, field.max_digits, field.decimal_places)
                                          if type(value) is Decimal and value.is_finite()
                                          else field.get_db_prep_save(value, connection))
    if type(field) is models.JSONField:
        encoder = field.encoder
        return lambda value, connection: (connection.ops.adapt_json_value(value, encoder)
                                          if type(value) is dict or type(value) is list else field.get_db_prep_save(value, connection))
    if type(field) is models.DateTimeField:
        return lambda value, connection: (statements.at(connection, value) if type(value) is datetime and value.tzinfo is not None
                                          else field.get_db_prep_save(value, connection))
    return None


def _plan(field) -> tuple:
    return field, _kept_type(field), _adapter(field)


def _connection(model):
    alias = router.db_for_write(model)
    return alias, connections[alias]


@lru_cache(maxsize=None)
def _insert_plan(model, vendor: str, rows: int) -> tuple[str, Callable]:
    meta = model._meta
    fields = tuple(f for f in meta.concrete_fields if f is not meta.auto_field)
    if any(getattr(f, "generated", False) or getattr(f, "db_returning", False) for f in fields):
        raise ValueError(f"{meta.label} has database-computed fields: write it with the ORM.")
    quote = connections[router.db_for_write(model)].ops.quote_name
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"
    sql = (f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
           f"VALUES {', '.join([one] * rows)} RETURNING {quote(meta.pk.column)}")
    return sql, _compiled(tuple(_plan(f) for f in fields))


def _slow(f, adapt, obj, value, connection, add: bool):
    """A kept field's value of another type, or a deferred one (the field reads it first), prepared by the field."""
    if value is _UNLOADED:
        value = f.pre_save(obj, add)
    if adapt is not None and value is not None:
        return adapt(value, connection)
    return f.get_db_prep_save(value, connection)


def _compiled(plans: tuple) -> Callable:
    """``values(obj, connection, add)``: the statement's parameters for ``obj``, one per field of ``plans``.

    Per field: a kept field's loaded value of its type (or None) as it is, any other value through
    ``_slow``; any other field through ``pre_save`` (``auto_now`` stamps), then its adapter (a value
    that is not None) or ``get_db_prep_save``. Written out field by field as the source of one
    function, compiled once per statement: a loop over the fields cost as much as running the INSERT.
    """
    names: dict = {"_UNLOADED": _UNLOADED}
    lines = ["def values(obj, connection, add):", "    get = obj.__dict__.get"]
    for i, (f, kept, adapt) in enumerate(plans):
        names |= {f"f{i}": f, f"kept{i}": kept, f"adapt{i}": adapt}
        if kept is not None:
            lines += [f"    v{i} = get({f.attname!r}, _UNLOADED)",
                      f"    if v{i} is not None and type(v{i}) is not kept{i}:",
                      f"        v{i} = _slow(f{i}, adapt{i}, obj, v{i}, connection, add)"]
        else:
            lines.append(f"    v{i} = f{i}.pre_save(obj, add)")
            if adapt is not None:
                lines.append(f"    v{i} = adapt{i}(v{i}, connection) if v{i} is not None else f{i}.get_db_prep_save(v{i}, connection)")
            else:
                lines.append(f"    v{i} = f{i}.get_db_prep_save(v{i}, connection)")
    lines.append("    return [" + ", ".join(f"v{i}" for i in range(len(plans))) + "]")
    names["_slow"] = _slow
    exec("\n".join(lines), names)
    return names["values"]


def insert_all(objs: list[models.Model]) -> list[models.Model]:
    """INSERT unsaved instances of one model in one statement; each gets its primary key (in order)."""
    if not objs:
        return objs
    model = type(objs[0])
    alias, connection = _connection(model)
    sql, values = _insert_plan(model, connection.vendor, len(objs))
    params = []
    for obj in objs:
        params += values(obj, connection, True)
    keys = [row[0] for row in statements.fetch(connection, sql, params)]
    if len(keys) != len(objs):
        raise RuntimeError(f"{len(objs)} rows inserted, {len(keys)} keys returned")
    for obj, key in zip(objs, keys):  # in the order of the VALUES, as the ORM's bulk_create assumes too
        obj.pk = key
        obj._state.adding, obj._state.db = False, alias
    return objs


def insert(obj: models.Model) -> models.Model:
    """INSERT one unsaved instance (like ``save(force_insert=True)``); it gets its primary key."""
    return insert_all([obj])[0]


#: Defaults of these types are written as they are, shared by every instance: they cannot be changed in place.
_IMMUTABLE = (type(None), str, int, bool, float, Decimal)
#: How Django keeps a concrete field's attribute: read from the instance's ``__dict__``, set into it (a
#: foreign key's only clears a cached related object, which a new instance does not have).
_PLAIN = (DeferredAttribute, ForeignKeyDeferredAttribute)


@lru_cache(maxsize=None)
def _new_plan(model) -> tuple[frozenset, dict, tuple] | None:
    """For ``new``: the attribute names, the constant defaults by name and the fields whose default is made
    afresh for each instance (a callable, a dict, a list); None when a field keeps its value otherwise."""
    names, constant, fresh = [], {}, []
    for f in model._meta.concrete_fields:
        if type(getattr(model, f.attname, None)) not in _PLAIN:
            return None
        names.append(f.attname)
        made = f.has_default() and callable(f.default)
        if not made and type(default := f.get_default()) in _IMMUTABLE:
            constant[f.attname] = default
        else:
            fresh.append((f.attname, f.get_default))
    return frozenset(names), constant, tuple(fresh)


def new(model, /, **values) -> models.Model:
    """Like ``model(**values)``: an unsaved instance, every other field at its default. Values are given by
    attribute name (``room_id``, not ``room``); any other keyword, a model with another kind of field
    attribute, or one with ``pre_init``/``post_init`` receivers goes through ``model(**values)``. The
    instance is filled in directly: ``Model.__init__`` costs a step about three times as much."""
    plan = _new_plan(model)
    if plan is None or not plan[0].issuperset(values) or pre_init.has_listeners(model) or post_init.has_listeners(model):
        return model(**values)
    _, constant, fresh = plan
    obj = model.__new__(model)
    obj._state = ModelState()
    loaded = obj.__dict__
    loaded.update(constant)
    for name, default in fresh:
        if name not in values:
            loaded[name] = default()
    loaded.update(values)
    return obj


def create(model, /, **values) -> models.Model:
    """Like ``model.objects.create(**values)``."""
    return insert(new(model, **values))


@lru_cache(maxsize=None)
def _update_plan(model, vendor: str, names: tuple[str, ...]) -> tuple[str, Callable]:
    meta = model._meta
    fields = tuple(meta.get_field(name) for name in names)
    if any(f.primary_key or not f.concrete for f in fields):
        raise ValueError("update() sets concrete, non-key fields only.")
    quote = connections[router.db_for_write(model)].ops.quote_name
    sets = ", ".join(f"{quote(f.column)} = %s" for f in fields)
    return f"UPDATE {quote(meta.db_table)} SET {sets} WHERE {quote(meta.pk.column)} = %s", _compiled(tuple(_plan(f) for f in fields))


def update(obj: models.Model, names: tuple[str, ...]) -> bool:
    """``obj.save(update_fields=names)`` in SQL built once: the named fields' values (``auto_now``
    fields named here are stamped); False when the row is gone."""
    model = type(obj)
    _, connection = _connection(model)
    sql, values = _update_plan(model, connection.vendor, tuple(names))
    params = values(obj, connection, False)
    return statements.write(connection, sql, [*params, obj.pk]) > 0


@lru_cache(maxsize=None)
def _saved_fields(model) -> tuple[str, ...]:
    meta = model._meta
    return tuple(f.name for f in meta.concrete_fields if not f.primary_key)


def save(obj: models.Model) -> bool:
    """``obj.save()`` of a row that exists (every field written, ``auto_now`` stamped) in SQL built once;
    False when the row is gone (where ``save()`` would insert it again)."""
    return update(obj, _saved_fields(type(obj)))
