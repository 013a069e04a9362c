"""Read models projected from the event log.

A projector is a function of one event that updates read-model rows, run inside the append's
transaction. `rebuild` wipes a campaign's read models and replays its stream through each type's
replayer instead (`eventlog.replay`: the same changes made to rows in memory and written in
bulk); tests compare what the two write, table by table.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from contextvars import ContextVar
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections, models

from eventlog import rows
from eventlog.chain import canonical_json
from eventlog.commit import PendingEvent
from eventlog.recorders import decode

if TYPE_CHECKING:
    from campaign.models import Campaign
    from eventlog.intact import ChainBroken
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


def read_models() -> tuple[type[models.Model], ...]:
    """The read models `rebuild` replaces (each has a `campaign` foreign key)."""
    return tuple(_read_models)


def register_read_models(*model_classes: type[models.Model]) -> None:
    for model_class in model_classes:
        if model_class not in _read_models:
            _read_models.append(model_class)


# The rows `insert` wrote for the event being applied (outside a rebuild), so that the service
# that appended it has them without reading them back.
_inserted: ContextVar[list[models.Model] | None] = ContextVar("inserted_rows", default=None)

M = TypeVar("M", bound=models.Model)


def event_id(event: Event) -> int | PendingEvent:
    """What a read-model row stores as its event's id: the id, or, while the append waits to
    go with the COMMIT, its stand-in (the row's INSERT then takes the id in the same statement)."""
    return event.pk if event.pk is not None else PendingEvent(event)


def inserted(event: Event, model_class: type[M]) -> M:
    """The ``model_class`` row that projecting ``event`` inserted (raises if none was)."""
    return next(row for row in event.projected if isinstance(row, model_class))


def insert(row: models.Model) -> None:
    """Create a read-model row (the service that appended the event gets it: `inserted`)."""
    _insert_one(row)
    written = _inserted.get()
    if written is not None:
        written.append(row)


def insert_values(model_class: type[M], values: dict[str, Any]) -> M:
    """`insert` of a row given as its field values (attnames; the others take their defaults)."""
    row = rows.new(model_class, values)
    insert(row)
    return row


@cache
def written_fields(model_class: type[models.Model]) -> tuple[models.Field, ...]:
    """The fields an INSERT gives (all but a generated id)."""
    return tuple(
        field
        for field in model_class._meta.concrete_fields
        if not (field.primary_key and isinstance(field, models.AutoField))
    )


def _insert_one(row: models.Model) -> None:
    """One row through the recorder's prepared INSERT … RETURNING id (the ORM's save builds its
    SQL anew each time), sent with the COMMIT; rows without a generated id are saved by the ORM."""
    from eventlog.recorders import recorder

    model_class = type(row)
    if not isinstance(model_class._meta.pk, models.AutoField):
        row.save(force_insert=True)
        return
    fields = written_fields(model_class)
    db = connections[DEFAULT_DB_ALIAS]
    values = [getattr(row, field.attname) for field in fields]
    pending = {at: value for at, value in enumerate(values) if isinstance(value, PendingEvent)}
    for at in pending:  # prepared as a missing id; the statement takes it from the append
        values[at] = None

    def inserted_as(pk: int) -> None:
        row.pk = pk
        for at, stand_in in pending.items():  # the appended event, its id known now
            setattr(row, fields[at].name, stand_in.event)

    # Nothing reads a projected row back before COMMIT (rows are found by campaign and seq,
    # never by id), so its INSERT goes with the COMMIT: one round trip fewer under the lock.
    table, quoted = _quoted_names(model_class, db.alias)
    prepared = rows.db_values(fields, values, db)
    for at, stand_in in pending.items():
        prepared[at] = stand_in
    recorder().insert_row_later(table, quoted, prepared, inserted_as)
    row._state.adding, row._state.db = False, db.alias


@cache
def _quoted_names(model_class: type[models.Model], alias: str) -> tuple[str, tuple[str, ...]]:
    """The table and `written_fields` columns of ``model_class``, quoted for the database of
    ``alias``: the same for every row, quoted once."""
    ops = connections[alias].ops
    return ops.quote_name(model_class._meta.db_table), tuple(
        ops.quote_name(field.column) for field in written_fields(model_class)
    )


def read_row(event: Event, model_class: type[M], **match: Any) -> M | None:
    """The ``model_class`` row matching ``match`` that the service appending ``event`` read under
    the stream lock and handed over (`append_event`'s ``read``): a projector changes it and
    writes it (`update_later`) instead of reading it again. None when it was not handed over (a
    caller that did not read it): the projector reads it then."""
    for row in getattr(event, "read_rows", ()):
        if isinstance(row, model_class) and all(
            getattr(row, name) == value for name, value in match.items()
        ):
            return row
    return None


def update_later(row: models.Model, fields: tuple[str, ...]) -> None:
    """Write ``fields`` of a read-model row as they are now, by its id, with the COMMIT where the
    database allows (eventlog/commit.py): nothing under the lock waits for it. The values are
    prepared as the ORM's save prepares them (the same JSON text on SQLite)."""
    from eventlog import commit

    db = connections[DEFAULT_DB_ALIAS]
    meta = type(row)._meta
    changed = [meta.get_field(name) for name in fields]
    sql = (
        f"UPDATE {db.ops.quote_name(meta.db_table)} SET "
        + ", ".join(f"{db.ops.quote_name(field.column)} = %s" for field in changed)
        + f" WHERE {db.ops.quote_name(meta.pk.column)} = %s"
    )
    params = [field.get_db_prep_save(getattr(row, field.attname), db) for field in changed]
    commit.write(db, sql, [*params, meta.pk.get_db_prep_value(row.pk, db)], None)


def apply(event: Event) -> None:
    # The projectors see the payload as a replay reads it back (keys in the stored, canonical
    # order), so that the JSON they write is the same text live and rebuilt.
    payload = event.payload
    text = getattr(event, "canonical_text", None) or getattr(event, "payload_text", None)
    event.payload = decode(text or canonical_json(payload))
    written: list[models.Model] = []
    token = _inserted.set(written)
    try:
        for projector in _projectors.get(event.type, ()):
            projector(event)
    finally:
        _inserted.reset(token)
        event.payload = payload
    event.projected = written


def rebuild(
    campaign: Campaign,
    *,
    on_problem: Callable[[ChainBroken], None] | None = None,
    advance: Callable[[int], None] | None = None,
) -> int:
    """Replace the campaign's read models by a replay of its whole stream (`eventlog.replay`:
    the types' replayers, rows written in bulk), checking the chain as it reads (a problem is
    raised, or handed to ``on_problem``). Must run in a transaction holding the stream lock, so
    that a refused or failed rebuild leaves the read models as they were; returns the number of
    events replayed."""
    from eventlog.intact import refuse
    from eventlog.recorders import recorder
    from eventlog.replay import replay

    # Children first, so foreign keys between read models never dangle mid-wipe.
    for model_class in reversed(_read_models):
        model_class.objects.filter(campaign=campaign).delete()
    rows = recorder().replay_rows(campaign.pk)
    try:
        return replay(campaign, rows, on_problem or refuse, advance)
    finally:
        rows.close()
