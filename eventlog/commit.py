"""Writes that ride with the COMMIT.

A write whose answer nothing in the transaction waits for (an append to a stream this
transaction has locked, the read-model row a projector inserts, the answer an Idempotency-Key
keeps) need not cost a round trip of its own while the campaign's stream lock is held: on
PostgreSQL it is queued and sent in one pipeline with the COMMIT, so the lock is released sooner.
An append and the writes queued after it go as *one statement*: the append's CTEs (`e`, the
events; `h`, the head) and each write as a CTE of its own, so a row that refers to an appended
event takes its id from `e` (`PendingEvent`), and the database parses one statement, not three.

Anything else the transaction runs first sends the queue (the backend's execute wrapper, the
recorder's cursor), so statements keep their order; a savepoint or a rollback sees every write
made before it. A failed queued write fails the COMMIT: the whole transaction is rolled back and
the error raised there, as Django does for a failed COMMIT. Elsewhere (SQLite, outside a
transaction) the write runs at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import psycopg
from django.db.backends.base.base import BaseDatabaseWrapper

from eventlog.recorders import logged

Done = Callable[[tuple | None], None]


@dataclass(frozen=True)
class PendingEvent:
    """A row's reference to an event appended with the COMMIT, whose id is not known yet: the
    statement takes it from the append's `e` by seq."""

    event: Any


@dataclass(frozen=True)
class Queued:
    sql: str  # INSERT/UPDATE/DELETE, with no WITH of its own (it may become a CTE)
    params: Sequence[Any]
    done: Done | None  # called with the statement's first row once it has run
    pending: tuple[int, ...] = ()  # where `params` has a `PendingEvent`


@dataclass(frozen=True)
class Append:
    """An append queued by the recorder: its CTEs (`e` RETURNING id, seq; `h` RETURNING id),
    their parameters, and the events whose ids it hands over."""

    ctes: str
    params: Sequence[Any]
    events: Sequence[Any]


def can_queue(connection: BaseDatabaseWrapper) -> bool:
    return getattr(connection, "queued_writes", None) is not None and connection.in_atomic_block


def write(connection: BaseDatabaseWrapper, sql: str, params: Sequence[Any], done: Done | None):
    """Run ``sql`` now, or queue it to go with the COMMIT where the backend can (PostgreSQL in a
    transaction). ``done`` gets its first row (e.g. a RETURNING id) whenever it has run. A
    `PendingEvent` among ``params`` stands for that event's id (the append must be queued)."""
    pending = tuple(at for at, value in enumerate(params) if isinstance(value, PendingEvent))
    if can_queue(connection):
        queued = Queued(sql, params, done, pending)
        _check(queued, connection.queued_writes)  # here, where a refusal still rolls back
        connection.queued_writes.append(queued)
        return
    if pending:
        raise RuntimeError("a row refers to an event not appended with this COMMIT")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone() if cursor.description else None
    if done is not None:
        done(row)


def _check(write: Queued, queue: list[Queued | Append]) -> None:
    """Refuse a write that could not go as queued: a row naming an event that is not the last
    queued append's (it would take no id), or a write folding into an append that returns
    anything but its id."""
    at = next((i for i in range(len(queue) - 1, -1, -1) if isinstance(queue[i], Append)), None)
    append = None if at is None else queue[at]
    pending = [write.params[at].event for at in write.pending]
    if pending and not (
        append is not None
        and _folds(write)
        and all(_folds(item) for item in queue[at + 1 :])  # it joins the append's statement
        and all(any(event is mine for mine in append.events) for event in pending)
    ):
        raise RuntimeError("a queued row refers to an event of another append")
    if append is not None and _folds(write):
        _returns_id(write.sql)


def append_later(connection: BaseDatabaseWrapper, append: Append) -> None:
    """Queue an append (the recorder's `append_later`); the writes queued after it join it."""
    connection.queued_writes.append(append)


# The head's guard, as an error the database raises inside the statement: queued with the COMMIT,
# an append whose head moved must fail the transaction, not be answered after it committed. (The
# cast depends on the row, so the planner cannot fold it into an error at plan time.)
_HEAD_GUARD = (
    "(SELECT CASE count(*) WHEN 1 THEN 1 "
    "ELSE ('the stream head moved: ' || count(*))::int END FROM h)"
)


def _statements(queued: list[Queued | Append]) -> list[tuple[str, list[Any], Callable | None]]:
    """The queue as statements: an append with the INSERTs queued after it, folded into one;
    anything else on its own. Only INSERTs fold: the CTEs of one statement run on one snapshot
    in no set order, so a write that reads or changes rows (an UPDATE, a DELETE) must not share
    the append's statement."""
    statements = []
    index = 0
    while index < len(queued):
        item = queued[index]
        index += 1
        if isinstance(item, Queued):
            statements.append((item.sql, list(item.params), item.done))
            continue
        folded = []
        while index < len(queued) and _folds(queued[index]):
            folded.append(queued[index])
            index += 1
        statements.append(_fold(item, folded))
    return statements


def _folds(item: Queued | Append) -> bool:
    return isinstance(item, Queued) and item.sql.lstrip()[:7].upper() == "INSERT "


def _fold(append: Append, writes: list[Queued]) -> tuple[str, list[Any], Callable]:
    params = list(append.params)
    ctes = [append.ctes]
    selected = ["(SELECT array_agg(id ORDER BY seq) FROM e)", _HEAD_GUARD]
    takers: list[tuple[int, Queued]] = []
    for number, write in enumerate(writes, 1):
        body, values = _with_events(write)
        ctes.append(f"w{number} AS ({body})")
        params += values
        if write.done is None:
            continue
        if _returns_id(write.sql):  # its first row is its id, selected here
            takers.append((len(selected), write))
            selected.append(f"(SELECT id FROM w{number})")
        else:
            takers.append((-1, write))
    sql = f"WITH {', '.join(ctes)} SELECT {', '.join(selected)}"

    def done(row: tuple | None) -> None:
        for event, pk in zip(append.events, row[0], strict=True):
            event.pk = pk
        for at, write in takers:
            write.done(None if at < 0 else (row[at],))

    return sql, params, done


def _with_events(write: Queued) -> tuple[str, list[Any]]:
    """The write's SQL and parameters with each `PendingEvent` parameter taken from `e` (that
    append's own events: `write` checked it when it was queued)."""
    values = list(write.params)
    if not write.pending:
        return write.sql, values
    for at in write.pending:
        values[at] = values[at].event.seq
    return _taking_ids(write.sql, write.pending, len(values)), values


@cache  # one text per statement and places of its pending events: a check's row is written alike
def _taking_ids(sql: str, pending: tuple[int, ...], count: int) -> str:
    """``sql`` with the placeholders at ``pending`` taking an event's id from `e` by its seq."""
    parts = sql.split("%s")
    if len(parts) != count + 1:
        raise ValueError("a queued write with a pending event must use plain %s placeholders")
    body = [parts[0]]
    for at, after in enumerate(parts[1:]):
        body.append("(SELECT id FROM e WHERE seq = %s)" if at in pending else "%s")
        body.append(after)
    return "".join(body)


@cache
def _returns_id(sql: str) -> bool:
    """Whether a write to fold hands over its id (``RETURNING id``; nothing else may be
    returned from inside the append's statement)."""
    returning = sql.upper().rpartition(" RETURNING ")
    if not returning[1]:
        return False
    if returning[2].strip() != "ID":
        raise ValueError(f"a write folded into an append may return only its id: {sql[:80]}")
    return True


def send(connection: BaseDatabaseWrapper, *, commit: bool = False) -> None:
    """Send the queued writes (and the COMMIT) in one pipeline: one round trip for all of them."""
    queued, connection.queued_writes = connection.queued_writes, []
    statements = _statements(queued)
    raw = connection.connection
    began = time.monotonic()
    cursors = []
    try:
        with raw.pipeline():
            for sql, params, _ in statements:
                cursor = psycopg.Cursor(raw)  # server-side binding, prepared like the recorder's
                cursor.execute(sql, params, prepare=True)
                cursors.append(cursor)
            if commit:
                raw.commit()
        for (_, _, done), cursor in zip(statements, cursors, strict=True):
            if done is not None:
                done(cursor.fetchone() if cursor.description else None)
    finally:
        for cursor in cursors:
            cursor.close()
    for sql, _, _ in statements:
        logged(connection, sql, began)
        if connection.queries_logged:  # for counting round trips, not only statements
            connection.queries_log[-1]["with_commit" if commit else "pipelined"] = True
