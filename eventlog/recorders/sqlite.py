"""The SQLite event recorder: the raw sqlite3 connection (its statement cache keeps each SQL
prepared), values stored as Django stores them (each field's own preparation: UUIDs as 32 hex
digits, times as naive UTC text, the payload as the canonical JSON text the chain hashes).

An append is two statements: SQLite has no data-modifying CTEs. They run in-process, and the
IMMEDIATE transaction already holds the database's write lock, so there is no round trip to save.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper

from eventlog import rows as stored
from eventlog.recorders import (
    HeadMoved,
    Recorded,
    django_errors,
    event_fields,
    event_table,
    head_table,
    logged,
)


@cache
def insert_sql() -> str:
    written = event_fields()[1:]
    return (
        f"INSERT INTO {event_table()} ({', '.join(f.column for f in written)}) "
        f"VALUES ({', '.join(['?'] * len(written))}) RETURNING id"
    )


@cache
def select_sql(limit: bool) -> str:
    return (
        f"SELECT {', '.join(f.column for f in event_fields())} FROM {event_table()} "
        "WHERE campaign_id = ? AND seq > ? ORDER BY seq" + (" LIMIT ?" if limit else "")
    )


class SqliteRecorder:
    def __init__(self, connection: BaseDatabaseWrapper) -> None:
        self.connection = connection

    def _raw(self):
        self.connection.ensure_connection()
        return self.connection.connection

    @django_errors
    def append(self, events: Sequence[Any], *, expected_seq: int) -> list[int]:
        written = event_fields()[1:]
        raw, connection, insert = self._raw(), self.connection, insert_sql()
        ids = []
        for event in events:
            values = [f.get_db_prep_save(getattr(event, f.attname), connection) for f in written]
            began = time.monotonic()
            ids.append(raw.execute(insert, values).fetchone()[0])
            logged(connection, insert, began)
        last = events[-1]
        update = (
            f"UPDATE {head_table()} SET head_seq = ?, head_hash = ? WHERE id = ? AND head_seq = ?"
        )
        began = time.monotonic()
        moved = raw.execute(update, (last.seq, last.hash, last.campaign_id, expected_seq))
        logged(connection, update, began)
        if moved.rowcount != 1:
            raise HeadMoved(f"campaign {last.campaign_id}: the head is not at {expected_seq}")
        return ids

    @django_errors
    def _fetch(self, sql: str, params: tuple) -> list[tuple]:
        began = time.monotonic()
        rows = self._raw().execute(sql, params).fetchall()
        logged(self.connection, sql, began)
        return rows

    def rows(self, campaign_id: int, *, after: int = 0, batch: int = 5000) -> Iterator[tuple]:
        from eventlog.models import Event

        sql = select_sql(True)
        convert = stored.converter(Event)
        while True:
            rows = self._fetch(sql, (campaign_id, after, batch))
            for row in rows:
                yield convert(row)
            if len(rows) < batch:
                return
            after = rows[-1][2]

    def read(self, campaign_id: int, *, after: int = 0, limit: int | None = None) -> list[Any]:
        from eventlog.models import Event

        sql = select_sql(limit is not None)
        params = (campaign_id, after) if limit is None else (campaign_id, after, limit)
        convert = stored.converter(Event)
        return [Event.from_db("default", None, convert(row)) for row in self._fetch(sql, params)]

    def events(self, campaign_id: int, *, after: int = 0, batch: int = 5000) -> Iterator[Any]:
        for row in self.rows(campaign_id, after=after, batch=batch):
            yield Recorded(row)

    @django_errors
    def fetch(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        """A hand-written read through Django's cursor (SQLite caches its statements itself)."""
        with self.connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    def insert_row(self, table: str, columns: Sequence[str], values: Sequence[Any]) -> int:
        sql = (
            f"INSERT INTO {table} ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' * len(columns))}) RETURNING id"
        )
        began = time.monotonic()
        (pk,) = self._raw().execute(sql, values).fetchone()
        logged(self.connection, sql, began)
        return pk

    @django_errors
    def insert_row_later(
        self, table: str, columns: Sequence[str], values: Sequence[Any], done: Callable[[int], None]
    ) -> None:
        """`insert_row` at once: SQLite has no round trip to save."""
        done(self.insert_row(table, columns, values))

    def copy_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """One prepared INSERT, executemany: SQLite's fastest way in from Python."""
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        began = time.monotonic()
        self._raw().executemany(sql, rows)
        logged(self.connection, sql, began, many=len(rows))
