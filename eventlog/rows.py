"""Model instances from rows a hand-written query returned, converted as the ORM would (JSON,
UUIDs and times per backend), for the few hot-path reads that join several tables in one round
trip and for the recorders' reads. Everything else reads through the ORM."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any, TypeVar
from uuid import UUID

from django.core.exceptions import ValidationError
from django.db import DEFAULT_DB_ALIAS, connection, connections, models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init

M = TypeVar("M", bound=models.Model)
_converters: dict[tuple[type, str], Callable[[Sequence[Any]], tuple]] = {}


@cache  # the hot path's statements are built per request from these
def columns(model: type[models.Model], alias: str) -> str:
    """`alias.column, …` for every stored field of ``model``, in the order `instance` takes."""
    return ", ".join(f"{alias}.{field.column}" for field in model._meta.concrete_fields)


def width(model: type[models.Model]) -> int:
    return len(model._meta.concrete_fields)


def converter(
    model: type[models.Model], db: BaseDatabaseWrapper | None = None
) -> Callable[[Sequence[Any]], tuple]:
    """A function from the stored values of `columns(model, …)` to the model's Python values
    (``db``: the connection they were read on, when the caller has it in hand)."""
    key = (model, (db or connection).vendor)
    convert = _converters.get(key)
    if convert is None:
        plan = []
        for index, field in enumerate(model._meta.concrete_fields):
            expression = field.get_col(model._meta.db_table)
            functions = connection.ops.get_db_converters(expression) + field.get_db_converters(
                connection
            )
            if functions:
                plan.append((index, expression, functions))

        def convert(values: Sequence[Any]) -> tuple:
            values = list(values)
            for index, expression, functions in plan:
                value = values[index]
                for function in functions:
                    value = function(value, expression, connection)
                values[index] = value
            return tuple(values)

        _converters[key] = convert
    return convert


def instance(model: type[M], values: Sequence[Any]) -> M | None:
    """The instance whose `columns(model, …)` are ``values`` (None when a LEFT JOIN found none).

    Built as `Model.from_db` builds it, but with the values put in the instance's dict at once
    instead of one `setattr` per field through its descriptor (a third of the time; the hot
    path builds a dozen per request). A model whose instances someone watches being made (a
    pre_init / post_init receiver) is built the ORM's way."""
    if values[0] is None:
        return None
    db = connections[DEFAULT_DB_ALIAS]  # once: each look-up through the proxy costs as much
    values = converter(model, db)(values)
    if _watched(model):
        return model.from_db(db.alias, None, values)
    new = model.__new__(model)
    new.__dict__.update(zip(_attnames(model), values, strict=True))
    state = new._state = ModelState()
    state.adding, state.db = False, db.alias
    return new


def _watched(model: type[models.Model]) -> bool:
    """Whether a pre_init or post_init receiver watches ``model``'s instances being made (none
    is connected at all, most often: asked first, it spares `has_listeners`' look-up)."""
    return bool(pre_init.receivers or post_init.receivers) and (
        pre_init.has_listeners(model) or post_init.has_listeners(model)
    )


@cache
def _attnames(model: type[models.Model]) -> tuple[str, ...]:
    return tuple(field.attname for field in model._meta.concrete_fields)


def new(model: type[M], values: Mapping[str, Any]) -> M:
    """``model(**values)`` for ``values`` named by attname, the fields not named taking their
    defaults: a row to insert (`eventlog.projections.insert_values`, an appended event), built
    as `instance` builds a row read, its dict filled at once (`Model.__init__` sets each field
    through its descriptor). A watched model, or a name that is no stored field's, goes through
    the model's own constructor (and its errors)."""
    if _watched(model) or not values.keys() <= _attname_set(model):
        return model(**values)
    fixed, made = _defaults(model)
    row = model.__new__(model)
    state = row.__dict__
    state.update(fixed)
    for attname, default in made:
        if attname not in values:
            state[attname] = default()
    state.update(values)
    row._state = ModelState()
    return row


@cache
def _attname_set(model: type[models.Model]) -> frozenset[str]:
    return frozenset(_attnames(model))


@cache
def _defaults(
    model: type[models.Model],
) -> tuple[dict[str, Any], tuple[tuple[str, Callable[[], Any]], ...]]:
    """The model's defaults: those that are one value for every row (the model shares them
    too), and the fields whose default is made anew for each (a callable's, a database's)."""
    fixed: dict[str, Any] = {}
    made = []
    for field in model._meta.concrete_fields:
        if field.db_default is models.NOT_PROVIDED and not callable(field.default):
            fixed[field.attname] = field.get_default()
        else:
            made.append((field.attname, field.get_default))
    return fixed, tuple(made)


# The fields whose values of a plain type `db_values` may pass as they are: Django's own (a
# subclass may prepare its values otherwise), for values of the type each is tried with.
_PLAIN_FIELDS = (
    models.AutoField,
    models.BigAutoField,
    models.IntegerField,
    models.BigIntegerField,
    models.SmallIntegerField,
    models.PositiveIntegerField,
    models.PositiveBigIntegerField,
    models.PositiveSmallIntegerField,
    models.CharField,
    models.TextField,
    models.BooleanField,
    models.UUIDField,
    models.ForeignKey,
    models.OneToOneField,
)
_SAMPLES = (123456789, "text", True, UUID(int=1))


def db_values(
    fields: tuple[models.Field, ...], values: Sequence[Any], db: BaseDatabaseWrapper
) -> list[Any]:
    """``field.get_db_prep_save(value, db)`` of each field and value, as the ORM's INSERT
    prepares them, without the calls where the answer is known from the value's type: a value
    the field keeps unchanged on this database (a str for a text field, a UUID for a UUID
    field where the database has the type, …) or wraps in a type of its own (an int in
    psycopg's Int4 or Int8 on PostgreSQL, which server-side binding needs), or None for a
    nullable field."""
    plan = _plain_types(fields, db.alias)
    return [
        (value if wrap is None else wrap(value))
        if type(value) is kind
        else value
        if value is None and nullable
        else field.get_db_prep_save(value, db)
        for field, value, (kind, nullable, wrap) in zip(fields, values, plan, strict=True)
    ]


Plan = tuple[type | None, bool, Callable[[Any], Any] | None]


@cache
def _plain_types(fields: tuple[models.Field, ...], alias: str) -> tuple[Plan, ...]:
    """For each field, the type whose values it stores unchanged or wrapped on the database of
    ``alias`` (tried, `_prepared_as`), whether None is one, and the wrapper (None: unchanged)."""
    db = connections[alias]
    plan: list[Plan] = []
    for field in fields:
        kind, wrap = None, None
        if type(field) in _PLAIN_FIELDS:
            for sample in _SAMPLES:
                found, wrap = _prepared_as(field, sample, db)
                if found:
                    kind = type(sample)
                    break
        plan.append((kind, kind is not None and field.null, wrap))
    return tuple(plan)


def _prepared_as(
    field: models.Field, sample: Any, db: BaseDatabaseWrapper
) -> tuple[bool, Callable[[Any], Any] | None]:
    """Whether ``field`` (one of Django's own, `_PLAIN_FIELDS`) prepares values of the sample's
    type alike: kept as they are (no wrapper), or, for an int, wrapped in a subclass of int
    holding the same value (the wrapper: an integer field's on PostgreSQL, chosen by the field's
    type, not by the value; tried with a second value all the same)."""
    try:
        prepared = field.get_db_prep_save(sample, db)
        if prepared is sample:
            return True, None
        wrapper = type(prepared)
        if type(sample) is not int or not (issubclass(wrapper, int) and prepared == sample):
            return False, None
        again = field.get_db_prep_save(-sample, db)
    except (TypeError, ValueError, ValidationError):
        return False, None
    return (True, wrapper) if type(again) is wrapper and again == -sample else (False, None)


def fetch(sql: str, params: Sequence[Any]) -> list[tuple]:
    """The rows of a hand-written read on the hot path: a prepared statement on PostgreSQL
    (server-side binding, planned once per connection), Django's cursor on SQLite."""
    from eventlog.recorders import recorder

    return recorder().fetch(sql, params)


def fetchone_locked(sql: str, params: Sequence[Any]) -> tuple | None:
    """`fetchone` taking the campaign's stream lock in the same round trip (`Recorder.fetch_locked`:
    ``sql`` joins the head's row as `cc`): the read sees what the lock's last holder committed."""
    from eventlog.recorders import recorder

    found = recorder().fetch_locked(sql, params)
    return found[0] if found else None


def fetchone(sql: str, params: Sequence[Any]) -> tuple | None:
    found = fetch(sql, params)
    return found[0] if found else None
