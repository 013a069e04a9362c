"""The event recorder seam: appending to a campaign's stream and reading it back, one small module
per database backend (`postgres`, `sqlite`), shaped like the `eventsourcing` library's recorders.

The services decide; the recorder writes. `eventlog.stream.append_event` hands it the event it
has chained (an unsaved `Event`, used as a plain value), and the recorder inserts the row and
moves the stream head in as few round trips as its backend allows, failing when the head is not
where the caller's lock left it. Reading (`read`, `rows`) yields the stored events without
building ORM querysets. Everything off the hot path keeps using the `Event` model.

Statements a recorder runs are entered in Django's query log when it is on (DEBUG, or a test's
CaptureQueriesContext), so statement counts see them like any other.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

# The stored columns of an event, in the order recorders read and write them.
COLUMNS = (
    "id",
    "campaign_id",
    "seq",
    "type",
    "payload",
    "actor_id",
    "created_at",
    "visibility",
    "session_id",
    "scene_id",
    "chapter_id",
    "character_id",
    "prev_hash",
    "hash",
)


class HeadMoved(RuntimeError):
    """The stream head was not where the caller's lock said: an append without the lock."""


class Recorder(Protocol):
    def append(self, events: Sequence[Any], *, expected_seq: int) -> list[int]:
        """Insert ``events`` (consecutive seqs after ``expected_seq``, unsaved `Event`s of one
        campaign), move the head to the last one, and return their ids."""

    def read(self, campaign_id: int, *, after: int = 0, limit: int | None = None) -> list[Any]:
        """The campaign's events with seq > ``after``, oldest first, as unsaved-looking `Event`s
        (no ORM query built)."""

    def rows(self, campaign_id: int, *, after: int = 0, batch: int = 5000) -> Iterator[tuple]:
        """The same as tuples of `COLUMNS` (payload decoded), streamed in batches."""


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
