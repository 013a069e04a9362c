"""The PostgreSQL event recorder: the raw psycopg connection, server-side binding and prepared
statements (Django's own cursors bind on the client and never prepare).

An append is one statement: the events' INSERT and the head's UPDATE are data-modifying CTEs of
one query, prepared once per connection and shape (number of events)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any

import psycopg
from django.db.backends.base.base import BaseDatabaseWrapper

from eventlog.chain import CanonicalEncoder
from eventlog.recorders import (
    HeadMoved,
    Paged,
    Recorded,
    event_fields,
    event_table,
    head_table,
    logged,
    page_params,
    page_sql,
)

_encode = CanonicalEncoder().encode


@cache
def _payload_index() -> int:
    return [field.attname for field in event_fields()].index("payload")


@cache
def append_sql(count: int) -> str:
    written = event_fields()[1:]
    row = "({})".format(
        ", ".join("%s::jsonb" if field.attname == "payload" else "%s" for field in written)
    )
    return (
        f"WITH e AS (INSERT INTO {event_table()} ({', '.join(f.column for f in written)}) "
        f"VALUES {', '.join([row] * count)} RETURNING id, seq), "
        f"h AS (UPDATE {head_table()} SET head_seq = %s, head_hash = %s "
        "WHERE id = %s AND head_seq = %s RETURNING id) "
        "SELECT e.id, (SELECT count(*) FROM h) FROM e ORDER BY e.seq"
    )


@cache
def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) "
        f"VALUES ({', '.join(['%s'] * len(columns))}) RETURNING id"
    )


@cache
def select_sql(limit: bool) -> str:
    return (
        f"SELECT {', '.join(f.column for f in event_fields())} FROM {event_table()} "
        "WHERE campaign_id = %s AND seq > %s ORDER BY seq" + (" LIMIT %s" if limit else "")
    )


@cache
def replay_sql() -> str:
    """A replay's rows: the hashed canonical text (the jsonb's text for rows appended without
    it), the ids and the time as text (COPY takes them back so; the session's time zone is UTC)
    and the time also as the event document has it."""
    return (
        "SELECT id, seq, type, COALESCE(payload_text, payload::text), actor_id, created_at::text, "
        "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"'), "
        "visibility, session_id::text, scene_id::text, chapter_id::text, character_id::text, "
        f"prev_hash, hash FROM {event_table()} WHERE campaign_id = %s AND seq > %s ORDER BY seq"
    )


class PostgresRecorder:
    def __init__(self, connection: BaseDatabaseWrapper) -> None:
        self.connection = connection

    @contextmanager
    def _cursor(self) -> Iterator[psycopg.Cursor]:
        # Driver errors become Django's, as for the queries Django runs itself: an outage is then
        # answered 503 (config/outage.py) and the connection is checked before its next use.
        with self.connection.wrap_database_errors:
            self.connection.ensure_connection()
            if getattr(self.connection, "queued_writes", None):  # they go first: eventlog/commit.py
                self.connection.send_queued_writes()
            with psycopg.Cursor(self.connection.connection) as cursor:  # server-side binding
                yield cursor

    def append(self, events: Sequence[Any], *, expected_seq: int) -> list[int]:
        attnames = [field.attname for field in event_fields()[1:]]
        params: list[Any] = []
        for event in events:
            for name in attnames:
                value = getattr(event, name)
                if name == "payload":  # the canonical text the append already made, if any
                    value = event.payload_text or _encode(value)
                params.append(value)
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

    def rows(self, campaign_id: int, *, after: int = 0, batch: int = 5000) -> Iterator[tuple]:
        sql = select_sql(True)
        at, loads = _payload_index(), json.loads
        seq_at = [field.attname for field in event_fields()].index("seq")
        while True:
            began = time.monotonic()
            with self._cursor() as cursor:
                cursor.execute(sql, (campaign_id, after, batch), prepare=True)
                rows = cursor.fetchall()
            logged(self.connection, sql, began)
            for row in rows:
                yield (*row[:at], loads(row[at]), *row[at + 1 :])
            if len(rows) < batch:
                return
            after = rows[-1][seq_at]

    def read(self, campaign_id: int, *, after: int = 0, limit: int | None = None) -> list[Any]:
        from eventlog.models import Event

        sql = select_sql(limit is not None)
        params = (campaign_id, after) if limit is None else (campaign_id, after, limit)
        at, loads = _payload_index(), json.loads
        began = time.monotonic()
        with self._cursor() as cursor:
            cursor.execute(sql, params, prepare=True)
            rows = cursor.fetchall()
        logged(self.connection, sql, began)
        return [
            Event.from_db("default", None, (*row[:at], loads(row[at]), *row[at + 1 :]))
            for row in rows
        ]

    def events(self, campaign_id: int, *, after: int = 0, batch: int = 5000) -> Iterator[Any]:
        for row in self.rows(campaign_id, after=after, batch=batch):
            yield Recorded(row)

    def fetch(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        """A hand-written read as a prepared statement: planned once per connection (for the
        hot path's joins, planning cost the server more than running them)."""
        began = time.monotonic()
        with self._cursor() as cursor:
            cursor.execute(sql, params, prepare=True)
            rows = cursor.fetchall()
        logged(self.connection, sql, began)
        return rows

    def replay_rows(
        self, campaign_id: int, *, after: int = 0, batch: int = 5000
    ) -> Iterator[tuple]:
        # One query, streamed through a server-side cursor (the rebuild's transaction holds it
        # open while the read models are written): pages of `seq > last LIMIT n` would each be
        # planned on their own, and on a table loaded since its last ANALYZE each re-sorted the
        # whole log.
        sql = replay_sql()
        began = time.monotonic()
        with self.connection.wrap_database_errors:
            self.connection.ensure_connection()
            # Outside a transaction the cursor must outlive the implicit one: WITH HOLD.
            held = not self.connection.in_atomic_block
            with self.connection.connection.cursor(name="replay", withhold=held) as cursor:
                cursor.itersize = batch
                cursor.execute(sql, (campaign_id, after))
                logged(self.connection, sql, began)
                while rows := cursor.fetchmany(batch):
                    for (
                        pk,
                        seq,
                        type_,
                        text,
                        actor,
                        created,
                        created_text,
                        visibility,
                        *rest,
                    ) in rows:
                        session, scene, chapter, character, prev, hash_ = rest
                        yield (
                            pk,
                            seq,
                            type_,
                            text,
                            actor,
                            created,
                            created_text,
                            visibility,
                            session,
                            scene,
                            chapter,
                            character,
                            (session, scene, chapter, character),  # ::text: the document's form
                            prev,
                            hash_,
                        )

    def page(
        self,
        campaign_id: int,
        *,
        after: int,
        limit: int,
        until: int | None = None,
        types: Sequence[str] = (),
        context: Sequence[tuple[str, str]] = (),
    ) -> list[Recorded]:
        columns = tuple(c for c, _ in context)
        # The canonical text (`payload_text`) is read as it is; the jsonb only for the rows
        # stored without that text (appended before it existed), decoded here.
        sql = page_sql(
            "%s",
            until is not None,
            len(types),
            columns,
            "{}::text",
            "CASE WHEN payload_text IS NULL THEN {} END",
        )
        params = page_params(campaign_id, after, limit, until, types, [v for _, v in context])
        began = time.monotonic()
        with self._cursor() as cursor:
            cursor.execute(sql, params, prepare=True)
            rows = cursor.fetchall()
        logged(self.connection, sql, began)
        at, loads = _payload_index(), json.loads
        return [
            Paged(row if row[at] is None else (*row[:at], loads(row[at]), *row[at + 1 :]))
            for row in rows
        ]

    def insert_row(self, table: str, columns: Sequence[str], values: Sequence[Any]) -> int:
        sql = _insert_sql(table, tuple(columns))
        began = time.monotonic()
        with self._cursor() as cursor:
            cursor.execute(sql, values, prepare=True)
            (pk,) = cursor.fetchone()
        logged(self.connection, sql, began)
        return pk

    def insert_row_later(
        self, table: str, columns: Sequence[str], values: Sequence[Any], done: Callable[[int], None]
    ) -> None:
        """`insert_row`, sent with the COMMIT (eventlog/commit.py); ``done`` gets the id."""
        from eventlog import commit

        sql = _insert_sql(table, tuple(columns))
        commit.write(self.connection, sql, values, lambda row: done(row[0]))

    def copy_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """COPY … FROM STDIN: the fastest way PostgreSQL takes many rows."""
        sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
        began = time.monotonic()
        with self._cursor() as cursor, cursor.copy(sql) as copy:
            for row in rows:
                copy.write_row(row)
        logged(self.connection, sql, began, many=len(rows))
