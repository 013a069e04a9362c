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
from uuid import UUID

from django.db.backends.base.base import BaseDatabaseWrapper

from eventlog import rows as stored
from eventlog.recorders import (
    CONTEXT_COLUMNS,
    HeadMoved,
    Paged,
    Recorded,
    django_errors,
    event_fields,
    event_table,
    head_table,
    logged,
    page_params,
    page_sql,
)


@cache
def insert_sql() -> str:
    written = event_fields()[1:]
    return (
        f"INSERT INTO {event_table()} ({', '.join(f.column for f in written)}) "
        f"VALUES ({', '.join(['?'] * len(written))}) RETURNING id"
    )


@cache
def select_sql() -> str:
    """`rows`' batches: the stored columns of the events after a seq, a batch at most."""
    return (
        f"SELECT {', '.join(f.column for f in event_fields())} FROM {event_table()} "
        "WHERE campaign_id = ? AND seq > ? ORDER BY seq LIMIT ?"
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
            values = [
                # The payload's canonical text, if the append made it: what the field would store.
                text
                if f.attname == "payload" and (text := getattr(event, "canonical_text", None))
                else f.get_db_prep_save(getattr(event, f.attname), connection)
                for f in written
            ]
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

    def append_later(self, events: Sequence[Any], *, expected_seq: int) -> None:
        """`append` at once (SQLite has no round trip to save); sets each event's ``pk``."""
        for event, pk in zip(events, self.append(events, expected_seq=expected_seq), strict=True):
            event.pk = pk

    @django_errors
    def _fetch(self, sql: str, params: tuple) -> list[tuple]:
        began = time.monotonic()
        rows = self._raw().execute(sql, params).fetchall()
        logged(self.connection, sql, began)
        return rows

    def rows(self, campaign_id: int, *, after: int = 0, batch: int = 5000) -> Iterator[tuple]:
        from eventlog.models import Event

        sql = select_sql()
        convert = stored.converter(Event)
        while True:
            rows = self._fetch(sql, (campaign_id, after, batch))
            for row in rows:
                yield convert(row)
            if len(rows) < batch:
                return
            after = rows[-1][2]

    def replay_rows(
        self, campaign_id: int, *, after: int = 0, batch: int = 5000
    ) -> Iterator[tuple]:
        return _replay_rows(self, campaign_id, after, batch)

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
        columns = tuple(column for column, _ in context)
        sql = page_sql("?", until is not None, len(types), columns, DOCUMENT_TIME)
        values = [UUID(value).hex for _, value in context]  # as SQLite keeps a UUID
        params = page_params(campaign_id, after, limit, until, types, values)
        return [Paged(values) for values in _presentable(self._fetch(sql, tuple(params)))]

    def fetch(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        """A hand-written read through Django's cursor (SQLite caches its statements itself)."""
        with self.connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    fetch_many = fetch

    def fetch_locked(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        # The write transaction (BEGIN IMMEDIATE) is the lock: no writer commits meanwhile.
        return self.fetch(sql, params)

    @django_errors
    def insert_row(self, table: str, columns: Sequence[str], values: Sequence[Any]) -> int:
        sql = (
            f"INSERT INTO {table} ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' * len(columns))}) RETURNING id"
        )
        began = time.monotonic()
        (pk,) = self._raw().execute(sql, values).fetchone()
        logged(self.connection, sql, began)
        return pk

    def insert_row_later(
        self, table: str, columns: Sequence[str], values: Sequence[Any], done: Callable[[int], None]
    ) -> None:
        """`insert_row` at once: SQLite has no round trip to save."""
        done(self.insert_row(table, columns, values))

    @django_errors
    def copy_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """One prepared INSERT, executemany: SQLite's fastest way in from Python."""
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        began = time.monotonic()
        self._raw().executemany(sql, rows)
        logged(self.connection, sql, began, many=len(rows))


@cache
def _positions() -> tuple[int, tuple[int, ...]]:
    names = [field.column for field in event_fields()]
    return names.index("payload"), tuple(names.index(column) for column in CONTEXT_COLUMNS)


# The time as `eventlog.chain.timestamp` writes it, from the text Django stores (UTC, naive,
# without the fraction when it is zero), by SQLite: a page's rows come with it.
DOCUMENT_TIME = (
    "replace({0}, ' ', 'T') || CASE WHEN instr({0}, '.') THEN '' ELSE '.000000' END || '+00:00'"
)


def _presentable(rows: list[tuple]) -> Iterator[list]:
    """Stored rows as `Paged` takes them: the payload's canonical text (the column's) as
    `payload_text`, the context ids as their text (each distinct id's made once)."""
    payload, ids = _positions()
    text_at = [field.attname for field in event_fields()].index("payload_text")
    texts: dict[str, str] = {}
    for row in rows:
        values = list(row)
        values[text_at], values[payload] = values[payload], None
        for at in ids:
            stored_id = values[at]
            if stored_id is not None:
                text = texts.get(stored_id)
                if text is None:
                    text = texts[stored_id] = _dashed(stored_id)
                values[at] = text
        yield values


@cache
def replay_sql() -> str:
    # `created_at || ''`: the stored text, not the datetime Django's converter would parse.
    return (
        "SELECT id, seq, type, payload, actor_id, created_at || '', visibility, session_id, "
        f"scene_id, chapter_id, character_id, prev_hash, hash FROM {event_table()} "
        "WHERE campaign_id = ? AND seq > ? ORDER BY seq LIMIT ?"
    )


def _dashed(stored: str) -> str:
    return f"{stored[:8]}-{stored[8:12]}-{stored[12:16]}-{stored[16:20]}-{stored[20:]}"


def _replay_rows(recorder: SqliteRecorder, campaign_id: int, after: int, batch: int):
    # A log has few distinct combinations of context ids: each one's text is made once.
    sql, texts = replay_sql(), {}
    while True:
        rows = recorder._fetch(sql, (campaign_id, after, batch))
        for pk, seq, type_, text, actor, created, visibility, *ids, prev, hash_ in rows:
            stored_ids = tuple(ids)
            text_ids = texts.get(stored_ids)
            if text_ids is None:
                text_ids = texts[stored_ids] = tuple(_dashed(id_) if id_ else id_ for id_ in ids)
            # The event document's forms (eventlog.chain.event_document) of the stored values.
            created_text = created.replace(" ", "T", 1)
            if "." not in created:
                created_text += ".000000"
            yield (
                pk,
                seq,
                type_,
                text,
                actor,
                created,
                created_text + "+00:00",
                visibility,
                *stored_ids,
                text_ids,
                prev,
                hash_,
            )
        if len(rows) < batch:
            return
        after = rows[-1][1]
