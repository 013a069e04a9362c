"""Read models projected from the event log.

A projector is a function of one event that updates read-model rows. The same projectors run
incrementally (inside the append transaction) and in `rebuild`, which wipes a campaign's read
models and replays its stream, so both paths give the same state by construction.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections, models

if TYPE_CHECKING:
    from campaign.models import Campaign
    from eventlog.models import Event

Projector = Callable[["Event"], None]

_projectors: dict[str, list[Projector]] = defaultdict(list)
# Read models with a `campaign` foreign key that `rebuild` wipes before replaying.
_read_models: list[type[models.Model]] = []


def projects(*event_types: str) -> Callable[[Projector], Projector]:
    def register(projector: Projector) -> Projector:
        for event_type in event_types:
            _projectors[event_type].append(projector)
        return projector

    return register


def register_read_models(*model_classes: type[models.Model]) -> None:
    for model_class in model_classes:
        if model_class not in _read_models:
            _read_models.append(model_class)


# During a rebuild, rows created through `insert` / `insert_values` wait here, as the values the
# database takes, and are written in bulk: a long log is mostly check events, and one INSERT
# (or one model instance) per event would dominate the rebuild.
_pending: ContextVar[dict[type[models.Model], list[list[Any]]] | None] = ContextVar(
    "pending_read_model_rows", default=None
)
_BATCH = 5000
# Event types whose projectors only *add* rows (through `insert`) and read no pending row.
_BATCHABLE: set[str] = set()


def batchable(*event_types: str) -> None:
    _BATCHABLE.update(event_types)


# The rows `insert` wrote for the event being applied (outside a rebuild), so that the service
# that appended it has them without reading them back.
_inserted: ContextVar[list[models.Model] | None] = ContextVar("inserted_rows", default=None)

M = TypeVar("M", bound=models.Model)


def inserted(event: Event, model_class: type[M]) -> M:
    """The ``model_class`` row that projecting ``event`` inserted (raises if none was)."""
    return next(row for row in event.projected if isinstance(row, model_class))


def rebuilding() -> bool:
    return _pending.get() is not None


def insert(row: models.Model) -> None:
    """Create a read-model row: at once, or batched while a rebuild replays the log."""
    pending = _pending.get()
    if pending is None:
        _insert_one(row)
        written = _inserted.get()
        if written is not None:
            written.append(row)
        return
    _add(pending, type(row), [getattr(row, field.attname) for field in _written(type(row))])


def insert_values(model_class: type[M], values: dict[str, Any]) -> M | None:
    """`insert` of a row given as its field values (attnames; the others take their defaults).
    While a rebuild replays the log no model instance is built (None is returned)."""
    pending = _pending.get()
    if pending is None:
        row = model_class(**values)
        insert(row)
        return row
    _add(
        pending,
        model_class,
        [
            values[field.attname] if field.attname in values else field.get_default()
            for field in _written(model_class)
        ],
    )
    return None


def _add(pending: dict, model_class: type[models.Model], values: list[Any]) -> None:
    rows = pending.setdefault(model_class, [])
    rows.append(values)
    if len(rows) >= _BATCH:
        _flush(pending)


@cache
def _written(model_class: type[models.Model]) -> list[models.Field]:
    return [
        field
        for field in model_class._meta.concrete_fields
        if not (field.primary_key and isinstance(field, models.AutoField))
    ]


# Values the drivers take as they are; every other field is prepared by the field itself.
_AS_IS = (
    models.CharField,
    models.TextField,
    models.IntegerField,
    models.BigIntegerField,
    models.PositiveBigIntegerField,
    models.PositiveIntegerField,
    models.BooleanField,
    models.ForeignKey,
)


def _insert_one(row: models.Model) -> None:
    """One row through the recorder's prepared INSERT … RETURNING id (the ORM's save builds its
    SQL anew each time), sent with the COMMIT; rows without a generated id are saved by the ORM."""
    from eventlog.recorders import recorder

    model_class = type(row)
    if not isinstance(model_class._meta.pk, models.AutoField):
        row.save(force_insert=True)
        return
    fields = _written(model_class)
    db = connections[DEFAULT_DB_ALIAS]

    def inserted_as(pk: int) -> None:
        row.pk = pk

    # Nothing reads a projected row back before COMMIT (rows are found by campaign and seq,
    # never by id), so its INSERT goes with the COMMIT: one round trip fewer under the lock.
    recorder().insert_row_later(
        db.ops.quote_name(model_class._meta.db_table),
        [db.ops.quote_name(field.column) for field in fields],
        [field.get_db_prep_save(getattr(row, field.attname), db) for field in fields],
        inserted_as,
    )
    row._state.adding, row._state.db = False, db.alias


def _flush(pending: dict[type[models.Model], list[list[Any]]]) -> None:
    for model_class, rows in pending.items():
        if rows:
            _insert_many(model_class, rows)
            rows.clear()


def _insert_many(model_class: type[models.Model], rows: list[list[Any]]) -> None:
    """Many rows in one go through the recorder (COPY on PostgreSQL, one prepared INSERT run
    with executemany on SQLite): bulk_create's SQL building costs more than the database's work
    for these narrow rows."""
    from eventlog.recorders import recorder

    fields = _written(model_class)
    db = connections[DEFAULT_DB_ALIAS]  # the real wrapper: the proxy costs a lookup per value
    prepare = [
        (index, field)
        for index, field in enumerate(fields)
        if not (isinstance(field, _AS_IS) and not field.choices)
    ]
    for row in rows:
        for index, field in prepare:
            row[index] = field.get_db_prep_save(row[index], db)
    recorder().copy_rows(
        db.ops.quote_name(model_class._meta.db_table),
        [db.ops.quote_name(field.column) for field in fields],
        rows,
    )


def flush_pending() -> None:
    """Write a rebuild's waiting rows now (for a projector that must read one back)."""
    pending = _pending.get()
    if pending is not None:
        _flush(pending)


def apply(event: Event) -> None:
    pending = _pending.get()
    if pending is not None and event.type not in _BATCHABLE:
        _flush(pending)  # this projector may read or change rows that are still pending
    written: list[models.Model] = []
    token = _inserted.set(written)
    try:
        for projector in _projectors.get(event.type, ()):
            projector(event)
    finally:
        _inserted.reset(token)
    event.projected = written


def rebuild(campaign: Campaign, events: Iterable[Event]) -> int:
    """Replace the campaign's read models by a replay of ``events`` (its whole stream, in order).

    Must run in a transaction holding the stream lock; returns the number of events replayed.
    """
    # Children first, so foreign keys between read models never dangle mid-wipe.
    for model_class in reversed(_read_models):
        model_class.objects.filter(campaign=campaign).delete()
    count = 0
    pending: dict[type[models.Model], list[models.Model]] = {}
    token = _pending.set(pending)
    try:
        for event in events:
            apply(event)
            count += 1
        _flush(pending)
    finally:
        _pending.reset(token)
    return count
