"""The PostgreSQL event recorder: the raw psycopg connection, server-side binding and prepared
statements (Django's own cursors bind on the client and never prepare).

An append is one statement: the events' INSERT and the head's UPDATE are data-modifying CTEs of
one query, prepared once per connection and shape (number of events)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
from django.db.backends.base.base import BaseDatabaseWrapper

from eventlog.chain import CanonicalEncoder
from eventlog.recorders import COLUMNS, HeadMoved, logged

_encode = CanonicalEncoder().encode
_WRITTEN = COLUMNS[1:]  # all but the id
_ROW = "(%s, %s, %s, %s::jsonb, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
_append_sql: dict[int, str] = {}


def _tables() -> tuple[str, str]:
    from campaign.models import Campaign, Event  # the models' table names, wherever they live

    return Event._meta.db_table, Campaign._meta.db_table


def append_sql(count: int) -> str:
    sql = _append_sql.get(count)
    if sql is None:
        events, campaigns = _tables()
        sql = _append_sql[count] = (
            f"WITH e AS (INSERT INTO {events} ({', '.join(_WRITTEN)}) "
            f"VALUES {', '.join([_ROW] * count)} RETURNING id, seq), "
            f"h AS (UPDATE {campaigns} SET head_seq = %s, head_hash = %s "
            "WHERE id = %s AND head_seq = %s RETURNING id) "
            "SELECT e.id, (SELECT count(*) FROM h) FROM e ORDER BY e.seq"
        )
    return sql


class PostgresRecorder:
    def __init__(self, connection: BaseDatabaseWrapper) -> None:
        self.connection = connection

    def _cursor(self) -> psycopg.Cursor:
        self.connection.ensure_connection()
        return psycopg.Cursor(self.connection.connection)  # server-side binding

    def append(self, events: Sequence[Any], *, expected_seq: int) -> list[int]:
        params: list[Any] = []
        for event in events:
            params += (
                event.campaign_id,
                event.seq,
                event.type,
                _encode(event.payload),
                event.actor_id,
                event.created_at,
                event.visibility,
                event.session_id,
                event.scene_id,
                event.chapter_id,
                event.character_id,
                event.prev_hash,
                event.hash,
            )
        last = events[-1]
        params += (last.seq, last.hash, last.campaign_id, expected_seq)
        sql = append_sql(len(events))
        began = time.monotonic()
        with self._cursor() as cursor:
            cursor.execute(sql, params, prepare=True)
            rows = cursor.fetchall()
        logged(self.connection, sql, began)
        if not rows or rows[0][1] != 1:
            raise HeadMoved(f"campaign {last.campaign_id}: the head is not at {expected_seq}")
        return [row[0] for row in rows]

    def _select(self, limit: bool) -> str:
        events, _ = _tables()
        return (
            f"SELECT {', '.join(COLUMNS)} FROM {events} WHERE campaign_id = %s AND seq > %s "
            "ORDER BY seq" + (" LIMIT %s" if limit else "")
        )

    def read(self, campaign_id: int, *, after: int = 0, limit: int | None = None) -> list[Any]:
        from campaign.models import Event

        sql = self._select(limit is not None)
        params = (campaign_id, after) if limit is None else (campaign_id, after, limit)
        began = time.monotonic()
        with self._cursor() as cursor:
            cursor.execute(sql, params, prepare=True)
            rows = cursor.fetchall()
        logged(self.connection, sql, began)
        return [_event(Event, row) for row in rows]

    def rows(self, campaign_id: int, *, after: int = 0, batch: int = 5000) -> Iterator[tuple]:
        sql = self._select(True)
        loads = json.loads
        while True:
            began = time.monotonic()
            with self._cursor() as cursor:
                cursor.execute(sql, (campaign_id, after, batch), prepare=True)
                rows = cursor.fetchall()
            logged(self.connection, sql, began)
            for row in rows:
                yield (*row[:4], loads(row[4]), *row[5:])
            if len(rows) < batch:
                return
            after = rows[-1][2]

    def copy_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Bulk-load read-model rows (a rebuild) with COPY."""
        sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
        began = time.monotonic()
        with self._cursor() as cursor, cursor.copy(sql) as copy:
            for row in rows:
                copy.write_row(row)
        logged(self.connection, sql, began, many=len(rows))


def _event(model: type, row: tuple) -> Any:
    return model.from_db("default", COLUMNS, (*row[:4], json.loads(row[4]), *row[5:]))
