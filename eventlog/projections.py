"""Read models projected from the event log.

A projector is a function of one event that updates read-model rows. The same projectors run
incrementally (inside the append transaction) and in `rebuild`, which wipes a campaign's read
models and replays its stream, so both paths give the same state by construction.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import TYPE_CHECKING, TypeVar

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


# During a rebuild, rows created through `insert` wait here and are written in bulk: a long log
# is mostly check events, and one INSERT per event would dominate the rebuild.
_pending: ContextVar[dict[type[models.Model], list[models.Model]] | None] = ContextVar(
    "pending_read_model_rows", default=None
)
_BATCH = 2000
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


def insert(row: models.Model) -> None:
    """Create a read-model row: at once, or batched while a rebuild replays the log."""
    pending = _pending.get()
    if pending is None:
        row.save(force_insert=True)
        written = _inserted.get()
        if written is not None:
            written.append(row)
        return
    rows = pending.setdefault(type(row), [])
    rows.append(row)
    if len(rows) >= _BATCH:
        _flush(pending)


def _flush(pending: dict[type[models.Model], list[models.Model]]) -> None:
    for model_class, rows in pending.items():
        if rows:
            _insert_many(model_class, rows)
            rows.clear()


def _insert_many(model_class: type[models.Model], rows: list[models.Model]) -> None:
    """Many rows in one go through the recorder (COPY on PostgreSQL, one prepared INSERT run
    with executemany on SQLite): bulk_create's SQL building costs more than the database's work
    for these narrow rows."""
    from eventlog.recorders import recorder

    fields = [
        field
        for field in model_class._meta.concrete_fields
        if not (field.primary_key and isinstance(field, models.AutoField))
    ]
    db = connections[DEFAULT_DB_ALIAS]  # the real wrapper: the proxy costs a lookup per value
    values = [
        [field.get_db_prep_save(getattr(row, field.attname), db) for field in fields]
        for row in rows
    ]
    recorder().copy_rows(
        db.ops.quote_name(model_class._meta.db_table),
        [db.ops.quote_name(field.column) for field in fields],
        values,
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
