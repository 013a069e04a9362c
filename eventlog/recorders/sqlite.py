"""The SQLite event recorder: the raw sqlite3 connection (its statement cache keeps each SQL
prepared), values stored as Django stores them (UUIDs as 32 hex digits, times as naive UTC text,
JSON as the canonical text the chain hashes).

An append is two statements: SQLite has no data-modifying CTEs. They run in-process, and the
IMMEDIATE transaction already holds the database's write lock, so there is no round trip to save.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from django.db.backends.base.base import BaseDatabaseWrapper

from eventlog.chain import CanonicalEncoder
from eventlog.recorders import COLUMNS, HeadMoved, logged

_encode = CanonicalEncoder().encode
_WRITTEN = COLUMNS[1:]


def _tables() -> tuple[str, str]:
    from campaign.models import Campaign, Event

    return Event._meta.db_table, Campaign._meta.db_table


def _uuid(value: Any) -> str | None:
    if value is None:
        return None
    return value.hex if isinstance(value, UUID) else UUID(str(value)).hex


def _time(value: datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return str(value)  # as Django's SQLite backend writes it


def _read_uuid(value: str | None) -> UUID | None:
    return None if value is None else UUID(value)


class SqliteRecorder:
    def __init__(self, connection: BaseDatabaseWrapper) -> None:
        self.connection = connection

    def _raw(self):
        self.connection.ensure_connection()
        return self.connection.connection

    def append(self, events: Sequence[Any], *, expected_seq: int) -> list[int]:
        table, campaigns = _tables()
        insert = (
            f"INSERT INTO {table} ({', '.join(_WRITTEN)}) "
            f"VALUES ({', '.join(['?'] * len(_WRITTEN))}) RETURNING id"
        )
        raw = self._raw()
        ids = []
        for event in events:
            began = time.monotonic()
            ids.append(
                raw.execute(
                    insert,
                    (
                        event.campaign_id,
                        event.seq,
                        event.type,
                        _encode(event.payload),
                        event.actor_id,
                        _time(event.created_at),
                        event.visibility,
                        _uuid(event.session_id),
                        _uuid(event.scene_id),
                        _uuid(event.chapter_id),
                        _uuid(event.character_id),
                        event.prev_hash,
                        event.hash,
                    ),
                ).fetchone()[0]
            )
            logged(self.connection, insert, began)
        last = events[-1]
        update = f"UPDATE {campaigns} SET head_seq = ?, head_hash = ? WHERE id = ? AND head_seq = ?"
        began = time.monotonic()
        moved = raw.execute(update, (last.seq, last.hash, last.campaign_id, expected_seq))
        logged(self.connection, update, began)
        if moved.rowcount != 1:
            raise HeadMoved(f"campaign {last.campaign_id}: the head is not at {expected_seq}")
        return ids

    def _select(self, limit: bool) -> str:
        table, _ = _tables()
        return (
            f"SELECT {', '.join(COLUMNS)} FROM {table} WHERE campaign_id = ? AND seq > ? "
            "ORDER BY seq" + (" LIMIT ?" if limit else "")
        )

    def rows(self, campaign_id: int, *, after: int = 0, batch: int = 5000) -> Iterator[tuple]:
        sql = self._select(True)
        loads = json.loads
        raw = self._raw()
        while True:
            began = time.monotonic()
            rows = raw.execute(sql, (campaign_id, after, batch)).fetchall()
            logged(self.connection, sql, began)
            for row in rows:
                yield _decoded(row, loads)
            if len(rows) < batch:
                return
            after = rows[-1][2]

    def read(self, campaign_id: int, *, after: int = 0, limit: int | None = None) -> list[Any]:
        from campaign.models import Event

        sql = self._select(limit is not None)
        params = (campaign_id, after) if limit is None else (campaign_id, after, limit)
        began = time.monotonic()
        rows = self._raw().execute(sql, params).fetchall()
        logged(self.connection, sql, began)
        return [Event.from_db("default", COLUMNS, _decoded(row, json.loads)) for row in rows]

    def copy_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Bulk-load read-model rows (a rebuild): one prepared INSERT, executemany."""
        sql = (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['?'] * len(columns))})"
        )
        began = time.monotonic()
        self._raw().executemany(sql, rows)
        logged(self.connection, sql, began, many=len(rows))


def _decoded(row: tuple, loads) -> tuple:
    created = row[6]
    if isinstance(created, str):
        created = datetime.fromisoformat(created)
    return (
        *row[:4],
        loads(row[4]),
        row[5],
        created.replace(tzinfo=UTC),
        row[7],
        _read_uuid(row[8]),
        _read_uuid(row[9]),
        _read_uuid(row[10]),
        _read_uuid(row[11]),
        row[12],
        row[13],
    )
