"""The event recorder seam: appending to a campaign's stream and reading it back, one small module
per database backend (`postgres`, `sqlite`), shaped like the `eventsourcing` library's recorders.

The services decide; the recorder writes. `eventlog.stream.append_event` hands it the events it
has chained (unsaved `Event`s, used as plain values), and the recorder inserts the rows and moves
the stream head in as few round trips as its backend allows, refusing (`HeadMoved`) when the head
is not where the caller's lock left it. Reading (`rows`, `page`, `replay_rows`) returns stored
events without building ORM querysets. The columns are the `Event` model's (a column added to
the model is written and read without touching the recorders). Everything off the hot path keeps
using the `Event` model.

Statements a recorder runs on the raw driver connection are entered in Django's query log when it
is on (DEBUG, or a test's CaptureQueriesContext), so statement counts see them like any other.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from functools import cache
from typing import Any, Protocol, TypeVar

import orjson
from django.db import connections, models
from django.db.backends.base.base import BaseDatabaseWrapper

T = TypeVar("T")


class HeadMoved(RuntimeError):
    """The stream head was not where the caller's lock said: an append without the lock."""


@cache
def event_fields() -> tuple[models.Field, ...]:
    """The stored fields of an event, in the model's order (the id first)."""
    from eventlog.models import Event

    return tuple(Event._meta.concrete_fields)


# What a locked read (`Recorder.fetch_locked`) calls the stream head's row.
HEAD_ALIAS = "cc"


@cache
def head_table() -> str:
    from eventlog.models import stream_owners

    return stream_owners().model._meta.db_table


def event_table() -> str:
    from eventlog.models import Event

    return Event._meta.db_table


class Recorded:
    """An event as a replay reads it: the stored values as the `Event` model's attributes
    (`pk` too), without a model instance; what projectors and the chain check read."""

    def __init__(self, values: Sequence[Any]) -> None:
        self.__dict__.update(zip(attnames(), values, strict=True))

    @property
    def pk(self) -> int:
        return self.id

    def __repr__(self) -> str:
        return f"<Recorded #{self.seq} {self.type}>"


class Paged(Recorded):
    """An event of a page (`Recorder.page`): ``payload_text`` is the canonical JSON its hash
    covers, and the payload is decoded from it when first read. A page is mostly presented from
    that text as it is (rolls.reads.present): decoding every payload cost a catch-up more than
    reading the rows. Built from the stored values with the payload's slot None, or holding the
    decoded payload of a row stored without its text (`Event.payload_text`), and the time as
    the event document writes it (``created_text``, selected so: parsing and formatting it back
    cost a catch-up a tenth of its time)."""

    def __init__(self, values: Sequence[Any]) -> None:
        super().__init__(values)
        self.created_text: str = self.__dict__.pop("created_at")
        decoded = self.__dict__.pop("payload")
        if decoded is not None or self.payload_text is None:
            self._payload = decoded

    @property
    def payload(self) -> Any:
        try:
            return self._payload
        except AttributeError:
            self._payload = decode(self.payload_text)
            return self._payload

    @property
    def created_at(self) -> datetime:
        return datetime.fromisoformat(self.created_text)

    def forget_payload(self) -> None:
        """Drop the decoded payload, which is decoded again from its text when read next."""
        if self.payload_text is not None:
            self.__dict__.pop("_payload", None)

    def __repr__(self) -> str:
        return f"<Paged #{self.seq} {self.type}>"


def decode(text: str | bytes) -> Any:
    """A stored payload's JSON text decoded (a replay's, a page's, the live projectors'): orjson,
    2-3x faster than `json.loads` on the log's payloads (decoding was the rebuild's largest
    cost), and `json.loads` for what orjson refuses and it takes (a lone surrogate's escape,
    NaN). orjson gives an integer beyond 64 bits as a float: no payload holds one (inputs stop at
    `campaign.limits.MAX_INT`), and live and rebuilt rows decode the same way. Only decoding:
    the canonical text the chain hashes is `eventlog.chain`'s, made by `json`."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


@cache
def attnames() -> tuple[str, ...]:
    return tuple(field.attname for field in event_fields())


class Recorder(Protocol):
    def append(self, events: Sequence[Any], *, expected_seq: int) -> list[int]:
        """Insert ``events`` (consecutive seqs after ``expected_seq``, unsaved `Event`s of one
        campaign), move the head to the last one, and return their ids."""

    def append_later(self, events: Sequence[Any], *, expected_seq: int) -> None:
        """`append` for a stream this transaction has locked, sent with the COMMIT where the
        backend can (eventlog/commit.py); sets each event's ``pk`` once it is known."""

    def rows(self, campaign_id: int, *, after: int = 0, batch: int = 5000) -> Iterator[tuple]:
        """The campaign's events with seq > ``after``, oldest first, as tuples of the model's
        stored values (`Recorded` takes them as attributes), streamed in batches."""

    def fetch(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        """The rows of a hand-written read (``%s`` placeholders), prepared where the backend
        can: the hot path's joins (`eventlog.rows.fetch`)."""

    def fetch_many(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        """`fetch` for a read of many rows (a page's check rows): on PostgreSQL one call that
        holds no GIL while the server works, prepared outside a transaction and planned each
        time inside one (`page` reads so too)."""

    def fetch_locked(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        """`fetch` taking the campaign's stream lock (until the transaction ends) in the same
        round trip, where no writer waits: ``sql`` is a SELECT that joins the head's row as
        `HEAD_ALIAS` (`SELECT … FROM campaign_campaign cc … WHERE cc.id = %s`). The rows show
        everything the lock's last holder committed."""

    def page(
        self,
        campaign_id: int,
        *,
        after: int,
        limit: int,
        until: int | None = None,
        types: Sequence[str] = (),
        context: Sequence[tuple[str, str]] = (),
    ) -> list[Paged]:
        """Up to ``limit`` events with seq in (after, until], oldest first, as `Paged` (no
        queryset, no model instance, the payload decoded only when read): of ``types`` if any,
        and with each ``context`` pair (one of `CONTEXT_COLUMNS`, a UUID's text). What
        `GET events/` and the live feed's catch-up read, to present: the context ids come as
        their text (`str(UUID)`), not as UUIDs."""

    def replay_rows(
        self, campaign_id: int, *, after: int = 0, batch: int = 5000
    ) -> Iterator[tuple]:
        """A replay's rows (`eventlog.replay.replay`): id, seq, type, the payload's canonical
        text, actor, created_at as stored and as the event document's text, visibility, the four
        context ids as stored, the same four as text, prev_hash, hash."""

    def insert_row(self, table: str, columns: Sequence[str], values: Sequence[Any]) -> int:
        """One read-model row (values as the field prepared them); its generated id."""

    def insert_row_later(
        self, table: str, columns: Sequence[str], values: Sequence[Any], done: Callable[[int], None]
    ) -> None:
        """`insert_row` for a row nothing reads back before COMMIT: sent with the COMMIT where
        the backend can (eventlog/commit.py); ``done`` gets the id once it is known."""

    def copy_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Bulk-load read-model rows (a rebuild), values as the driver takes them."""


CONTEXT_COLUMNS = ("session_id", "scene_id", "chapter_id", "character_id")


@cache
def page_sql(
    mark: str,
    until: bool,
    types: int,
    context: tuple[str, ...],
    created_as: str,
    ids_as: str = "{}",
    payload_as: str = "{}",
) -> str:
    """`Recorder.page`'s statement for one shape of filter (``mark``: the driver's placeholder;
    ``created_as``: the time as the event document writes it, `eventlog.chain.timestamp`;
    ``ids_as``: how the context ids are selected, e.g. "{}::text"; ``payload_as``: the payload
    column's); the parameters go campaign, after, [until], [types…], [context], limit."""
    where = [f"campaign_id = {mark}", f"seq > {mark}"]
    if until:
        where.append(f"seq <= {mark}")
    if types:
        where.append(f"type IN ({', '.join([mark] * types)})")
    for column in context:
        if column not in CONTEXT_COLUMNS:
            raise ValueError(f"not a context column: {column}")
        where.append(f"{column} = {mark}")
    columns = [
        ids_as.format(field.column)
        if field.column in CONTEXT_COLUMNS
        else payload_as.format(field.column)
        if field.attname == "payload"
        else created_as.format(field.column)
        if field.attname == "created_at"
        else field.column
        for field in event_fields()
    ]
    return (
        f"SELECT {', '.join(columns)} FROM {event_table()} "
        f"WHERE {' AND '.join(where)} ORDER BY seq LIMIT {mark}"
    )


def page_params(
    campaign_id: int,
    after: int,
    limit: int,
    until: int | None,
    types: Sequence[str],
    context: Sequence[Any],
) -> list[Any]:
    return [campaign_id, after, *([] if until is None else [until]), *types, *context, limit]


def recorder(alias: str = "default") -> Recorder:
    connection = connections[alias]
    if connection.vendor == "postgresql":
        from eventlog.recorders.postgres import PostgresRecorder

        return PostgresRecorder(connection)
    if connection.vendor == "sqlite":
        from eventlog.recorders.sqlite import SqliteRecorder

        return SqliteRecorder(connection)
    raise NotImplementedError(f"no event recorder for {connection.vendor}")


def logged(connection: BaseDatabaseWrapper, sql: str, began: float, many: int = 0) -> None:
    """Enter a statement run on the raw driver connection in Django's query log, if it is on."""
    if connection.queries_logged:
        entry = {"sql": sql, "time": f"{time.monotonic() - began:.3f}"}
        if many:
            entry["many"] = many
        connection.queries_log.append(entry)


def django_errors(method: Callable[..., T]) -> Callable[..., T]:
    """Run a recorder method under Django's error wrapper: a driver error becomes Django's (an
    outage or a locked SQLite file is then answered 503 by config/outage.py, as for the queries
    Django runs itself)."""

    @functools.wraps(method)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> T:
        with self.connection.wrap_database_errors:
            return method(self, *args, **kwargs)

    return wrapped
