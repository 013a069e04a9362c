"""Writes that ride with the COMMIT.

A write whose answer nothing in the transaction waits for (the read-model row a projector
inserts, the answer an Idempotency-Key keeps) need not cost a round trip of its own while the
campaign's stream lock is held: on PostgreSQL it is queued and sent in one pipeline with the
COMMIT, so the lock is released one or two round trips sooner. Anything else the transaction runs
first sends the queue (the backend's execute wrapper, the recorder's cursor), so statements keep
their order; a savepoint or a rollback sees every write made before it. A failed queued write
fails the COMMIT: the whole transaction is rolled back and the error raised there, as Django
does for a failed COMMIT. Elsewhere (SQLite, outside a transaction) the write runs at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from django.db.backends.base.base import BaseDatabaseWrapper

from eventlog.recorders import logged

Done = Callable[[tuple | None], None]


@dataclass(frozen=True)
class Queued:
    sql: str
    params: Sequence[Any]
    done: Done | None  # called with the statement's first row once it has run


def write(connection: BaseDatabaseWrapper, sql: str, params: Sequence[Any], done: Done | None):
    """Run ``sql`` now, or queue it to go with the COMMIT where the backend can (PostgreSQL in a
    transaction). ``done`` gets its first row (e.g. a RETURNING id) whenever it has run."""
    queue = getattr(connection, "queued_writes", None)
    if queue is not None and connection.in_atomic_block:
        queue.append(Queued(sql, params, done))
        return
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone() if cursor.description else None
    if done is not None:
        done(row)


def send(connection: BaseDatabaseWrapper, *, commit: bool = False) -> None:
    """Send the queued writes (and the COMMIT) in one pipeline: one round trip for all of them."""
    queued, connection.queued_writes = connection.queued_writes, []
    raw = connection.connection
    began = time.monotonic()
    cursors = []
    try:
        with raw.pipeline():
            for write in queued:
                cursor = psycopg.Cursor(raw)  # server-side binding, prepared like the recorder's
                cursor.execute(write.sql, write.params, prepare=True)
                cursors.append(cursor)
            if commit:
                raw.commit()
        for write, cursor in zip(queued, cursors, strict=True):
            if write.done is not None:
                write.done(cursor.fetchone() if cursor.description else None)
    finally:
        for cursor in cursors:
            cursor.close()
    for write in queued:
        logged(connection, write.sql, began)
        if connection.queries_logged:  # for counting round trips, not only statements
            connection.queries_log[-1]["with_commit" if commit else "pipelined"] = True
