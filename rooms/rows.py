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
from functools import lru_cache

from django.db import connections, models, router
from django.db.models import fields as F

from rooms import statements

#: Fields whose preparation leaves a value of exactly this type (or None) as it is: such a value is
#: written without the calls (``Field.pre_save`` reads the attribute; the ``get_*prep*`` chain
#: returns it unchanged on SQLite and PostgreSQL). Any other value goes through the field.
_KEPT_AS_IS = {F.CharField: str, F.TextField: str, F.BooleanField: bool, F.IntegerField: int,
               F.PositiveIntegerField: int, F.PositiveSmallIntegerField: int, F.SmallIntegerField: int,
               F.BigIntegerField: int}
_KEYS = (F.AutoField, F.BigAutoField)


def _kept_type(field) -> type | None:
    """The type of value ``field`` writes unchanged, or None: every value goes through the field."""
    if isinstance(field, models.ForeignKey) and type(field) is models.ForeignKey and type(field.target_field) in _KEYS:
        return int
    return _KEPT_AS_IS.get(type(field))


def _adapter(field):
    """For a JSON or date-time field (those exact classes), what its ``get_db_prep_save`` comes to for the
    values a step writes (a dict or list; an aware datetime): the backend's adaptation, called directly.
    None for other fields; other values go through the field."""
    if type(field) is models.JSONField:
        encoder = field.encoder
        return lambda value, connection: (connection.ops.adapt_json_value(value, encoder)
                                          if type(value) is dict or type(value) is list else field.get_db_prep_save(value, connection))
    if type(field) is models.DateTimeField:
        return lambda value, connection: (connection.ops.adapt_datetimefield_value(value)
                                          if type(value) is datetime and value.tzinfo is not None
                                          else field.get_db_prep_save(value, connection))
    return None


def _plan(field) -> tuple:
    return field, _kept_type(field), _adapter(field)


def _connection(model):
    alias = router.db_for_write(model)
    return alias, connections[alias]


@lru_cache(maxsize=None)
def _insert_plan(model, vendor: str, rows: int) -> tuple[str, tuple]:
    meta = model._meta
    fields = tuple(f for f in meta.concrete_fields if f is not meta.auto_field)
    if any(getattr(f, "generated", False) or getattr(f, "db_returning", False) for f in fields):
        raise ValueError(f"{meta.label} has database-computed fields: write it with the ORM.")
    quote = connections[router.db_for_write(model)].ops.quote_name
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"
    sql = (f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
           f"VALUES {', '.join([one] * rows)} RETURNING {quote(meta.pk.column)}")
    return sql, tuple(_plan(f) for f in fields)


def _values(obj, fields, connection, add: bool = True) -> list:
    values = []
    for f, kept, adapt in fields:
        if kept is not None:
            value = getattr(obj, f.attname)
            if value is None or type(value) is kept:
                values.append(value)
                continue
        else:
            value = f.pre_save(obj, add)
        if adapt is not None and value is not None:
            values.append(adapt(value, connection))
        else:
            values.append(f.get_db_prep_save(value, connection))
    return values


def insert_all(objs: list[models.Model]) -> list[models.Model]:
    """INSERT unsaved instances of one model in one statement; each gets its primary key (in order)."""
    if not objs:
        return objs
    model = type(objs[0])
    alias, connection = _connection(model)
    sql, fields = _insert_plan(model, connection.vendor, len(objs))
    params = []
    for obj in objs:
        params += _values(obj, fields, connection)
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


@lru_cache(maxsize=None)
def _fields_by_attname(model) -> tuple[dict, tuple]:
    fields = tuple(model._meta.concrete_fields)
    return {f.attname: i for i, f in enumerate(fields)}, fields


def new(model, /, **values) -> models.Model:
    """Like ``model(**values)`` (an unsaved instance, every other field at its default), built positionally:
    the keyword path of ``Model.__init__`` costs a step about three times as much. Values are given by
    attribute name (``room_id``, not ``room``); any other keyword goes through ``model(**values)``."""
    index, fields = _fields_by_attname(model)
    if any(name not in index for name in values):
        return model(**values)
    args = [f.get_default() for f in fields]
    for name, value in values.items():
        args[index[name]] = value
    return model(*args)


def create(model, /, **values) -> models.Model:
    """Like ``model.objects.create(**values)``."""
    return insert(new(model, **values))


@lru_cache(maxsize=None)
def _update_plan(model, vendor: str, names: tuple[str, ...]) -> tuple[str, tuple]:
    meta = model._meta
    fields = tuple(meta.get_field(name) for name in names)
    if any(f.primary_key or not f.concrete for f in fields):
        raise ValueError("update() sets concrete, non-key fields only.")
    quote = connections[router.db_for_write(model)].ops.quote_name
    sets = ", ".join(f"{quote(f.column)} = %s" for f in fields)
    return f"UPDATE {quote(meta.db_table)} SET {sets} WHERE {quote(meta.pk.column)} = %s", tuple(_plan(f) for f in fields)


def update(obj: models.Model, names: tuple[str, ...]) -> bool:
    """``obj.save(update_fields=names)`` in SQL built once: the named fields' values (``auto_now``
    fields named here are stamped); False when the row is gone."""
    model = type(obj)
    _, connection = _connection(model)
    sql, fields = _update_plan(model, connection.vendor, tuple(names))
    params = _values(obj, fields, connection, add=False)
    return statements.write(connection, sql, [*params, obj.pk]) > 0
