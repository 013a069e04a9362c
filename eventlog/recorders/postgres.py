"""The PostgreSQL event recorder: the raw psycopg connection, server-side binding and prepared
statements (Django's own cursors bind on the client and never prepare).

An append is one statement: the events' INSERT and the head's UPDATE are data-modifying CTEs of
one query, prepared once per connection and shape (number of events). A page's reads (`page`,
`fetch_many`) go in one libpq call each, holding no GIL while the server works (`_whole`)."""

from __future__ import annotations

import hashlib
import queue
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager, suppress
from datetime import datetime
from functools import cache
from typing import Any
from uuid import UUID

import psycopg
from django.db.backends.base.base import BaseDatabaseWrapper
from psycopg import pq
from psycopg.adapt import Transformer

from eventlog.chain import CanonicalEncoder, timestamp
from eventlog.recorders import (
    HEAD_ALIAS,
    HeadMoved,
    Paged,
    Recorded,
    decode,
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
def appended_fields() -> tuple[Any, ...]:
    """The columns an append writes: all but the id and the jsonb payload, which PostgreSQL
    generates from the canonical text (`payload_text`, eventlog.0007)."""
    return tuple(field for field in event_fields()[1:] if field.attname != "payload")


@cache
def append_ctes(count: int) -> str:
    """The append's two CTEs: `e`, the events inserted (RETURNING id, seq), and `h`, the head
    moved from the expected seq (RETURNING id: no row when it was elsewhere)."""
    written = appended_fields()
    row = "({})".format(", ".join(["%s"] * len(written)))
    return (
        f"e AS (INSERT INTO {event_table()} ({', '.join(f.column for f in written)}) "
        f"VALUES {', '.join([row] * count)} RETURNING id, seq), "
        f"h AS (UPDATE {head_table()} SET head_seq = %s, head_hash = %s "
        "WHERE id = %s AND head_seq = %s RETURNING id)"
    )


@cache
def locked_read_sql(sql: str) -> str:
    """``sql`` (`Recorder.fetch_locked`'s: a SELECT joining the head's row as `HEAD_ALIAS`)
    taking the stream lock itself, after a first column saying whether the head's row it locked
    is the version the statement's snapshot reads. It is not when the lock waited for a holder
    that committed (found as EvalPlanQual finds it: the locked row is the newest version, every
    other row the snapshot's); every holder leaves the row a new version (an append moves the
    head, `eventlog.stream.lock_stream` is an UPDATE), so an unchanged version means no holder
    committed since the snapshot was taken."""
    if not sql.startswith("SELECT "):
        raise ValueError("a locked read is a SELECT")
    return (
        f"SELECT (SELECT h.xmin = {HEAD_ALIAS}.xmin FROM {head_table()} h "
        f"WHERE h.id = {HEAD_ALIAS}.id), {sql.removeprefix('SELECT ')} FOR UPDATE OF {HEAD_ALIAS}"
    )


@cache
def append_sql(count: int) -> str:
    return f"WITH {append_ctes(count)} SELECT e.id, (SELECT count(*) FROM h) FROM e ORDER BY e.seq"


@cache
def _insert_sql(table: str, columns: tuple[str, ...]) -> str:
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) "
        f"VALUES ({', '.join(['%s'] * len(columns))}) RETURNING id"
    )


@cache
def select_sql() -> str:
    """`rows`' batches: the stored columns of the events after a seq, a batch at most; the
    jsonb only for a row stored without its canonical text (`payload_text`), which is decoded
    instead: turning every jsonb into text was most of the server's work in a read."""
    return (
        "SELECT "
        + ", ".join(
            "CASE WHEN payload_text IS NULL THEN payload END"
            if field.attname == "payload"
            else field.column
            for field in event_fields()
        )
        + f" FROM {event_table()} WHERE campaign_id = %s AND seq > %s ORDER BY seq LIMIT %s"
    )


@cache
def replay_sql() -> str:
    """A replay's rows: the hashed canonical text (the jsonb's text for rows appended without
    it), the ids and the time as text (COPY takes them back so; the session's time zone is UTC:
    `document_time` makes the event document's form of the time from it, cheaper than the
    server's to_char)."""
    return (
        "SELECT id, seq, type, COALESCE(payload_text, payload::text), actor_id, created_at::text, "
        "visibility, session_id::text, scene_id::text, chapter_id::text, character_id::text, "
        f"prev_hash, hash FROM {event_table()} WHERE campaign_id = %s AND seq > %s ORDER BY seq"
    )


def _append_params(events: Sequence[Any], expected_seq: int) -> list[Any]:
    attnames = [field.attname for field in appended_fields()]
    params: list[Any] = []
    for event in events:
        for name in attnames:
            value = getattr(event, name)
            if name == "payload_text" and value is None:  # the append made none: made here
                value = _encode(event.payload)
            params.append(value)
    last = events[-1]
    params += (last.seq, last.hash, last.campaign_id, expected_seq)
    return params


# The time as `eventlog.chain.timestamp` writes it, by the server (a page's 200 rows: cheaper
# there than parsing and formatting each in Python; a replay's million: `document_time`).
DOCUMENT_TIME = """to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')"""


def document_time(stored: str) -> str:
    """A timestamptz's text in the UTC session ("2026-12-01 01:11:44.0929+00", the fraction's
    trailing zeros left out) as the event document has it ("2026-12-01T01:11:44.092900+00:00",
    `eventlog.chain.timestamp`)."""
    if stored[-3:] != "+00" or stored[4] != "-" or len(stored) > 29:  # not UTC, or a far year
        return timestamp(datetime.fromisoformat(stored))
    fraction = stored[19:-3] or "."
    return f"{stored[:10]}T{stored[11:19]}{fraction}{'0' * (7 - len(fraction))}+00:00"


_DONE = object()


def _fetched_ahead(cursor: psycopg.ServerCursor, batch: int, ahead: int = 2) -> Iterator[list]:
    """The server-side cursor's batches, fetched by a thread up to ``ahead`` batches ahead of
    the caller. Fetched in turn, the server idled while the replay worked and the replay waited
    while the server read: half of a rebuild's time on two cores. psycopg lets the GIL go while
    it waits on the server, and its connection lock serializes the fetches with the statements
    the caller runs meanwhile (a rebuild's COPY). A closed generator stops the thread before the
    cursor closes; the thread's error is raised here."""
    batches: queue.Queue = queue.Queue(maxsize=ahead)
    stop = threading.Event()

    def fetch() -> None:
        try:
            while not stop.is_set():
                rows = cursor.fetchmany(batch)
                batches.put(rows)
                if not rows:
                    return
        except BaseException as error:  # handed to the caller's thread
            batches.put(error)
        finally:
            batches.put(_DONE)

    reader = threading.Thread(target=fetch, name="replay-rows", daemon=True)
    reader.start()
    try:
        while (rows := batches.get()) is not _DONE:
            if isinstance(rows, BaseException):
                raise rows
            if not rows:
                return
            yield rows
    finally:
        stop.set()
        while reader.is_alive():  # unblock a put on the full queue
            with suppress(queue.Empty):
                batches.get(timeout=0.05)
        reader.join()


@cache
def _numbered(sql: str) -> bytes:
    """A read's text with ``$n`` for its ``%s`` placeholders, as libpq takes it."""
    numbered = iter(range(1, sql.count("%s") + 1))
    text = re.sub("%s", lambda _: f"${next(numbered)}", sql)
    if "%" in text.replace("%%", ""):
        raise ValueError(f"a placeholder other than %s in {sql!r}")
    return text.replace("%%", "%").encode()


@cache
def _statement_name(sql: str) -> bytes:
    return b"tc_" + hashlib.sha256(sql.encode()).hexdigest()[:24].encode()


# The reads `_whole` has prepared on each driver connection.
_prepared: weakref.WeakKeyDictionary[psycopg.Connection, set[bytes]] = weakref.WeakKeyDictionary()


def _parameter(value: Any) -> bytes | None:
    """A parameter as PostgreSQL's text input takes it (the statement's own types decide)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return ("{" + ",".join(map(_element, value)) + "}").encode()
    return _scalar(value).encode()


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "t" if value else "f"
    if not isinstance(value, (int, str, UUID)):
        raise TypeError(f"no text for a parameter of type {type(value).__name__}")
    text = str(value)
    if "\x00" in text:  # libpq would end the text there: another query, not an error
        raise psycopg.DataError("PostgreSQL text cannot contain NUL (0x00) characters")
    return text


def _element(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return '"' + _scalar(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _whole(raw: psycopg.Connection, sql: str, params: Sequence[Any]) -> list[tuple]:
    """The rows of a read of many, run in one libpq call that holds no GIL from sending it until
    the whole result is in. A psycopg cursor waits for a result in steps, each taking the GIL
    back: beside a thread busy in Python (a catch-up page being presented, a request), each
    step waited out the interpreter's switch interval (5 ms), and a page-sized result took
    358 ms instead of 2.8 (#17, bench/convoy.py)."""
    values = [_parameter(value) for value in params]
    with raw.lock:  # as psycopg's own calls hold it
        pgconn = raw.pgconn
        if pgconn.transaction_status == pq.TransactionStatus.IDLE:
            result = _run_prepared(raw, sql, values)
        else:
            # psycopg deallocates every prepared statement of its connection after a rollback,
            # its own and these alike, and one found gone inside a transaction would fail the
            # transaction: planned each time there (0.4-0.7 ms of the server's, against 3-8 ms
            # running a page's reads).
            result = pgconn.exec_params(_numbered(sql), values)
        _checked(raw, result)
        loader = Transformer(raw)
        loader.set_pgresult(result)
        return loader.load_rows(0, result.ntuples, tuple)


def _run_prepared(raw: psycopg.Connection, sql: str, values: list[bytes | None]) -> Any:
    """Outside a transaction: prepared once per connection, and again when found gone. psycopg
    sends a `DEALLOCATE ALL` after a rollback, and after some commands (DISCARD ALL, DROP…)
    only with its next statement: a statement prepared after one may outlive another prepared
    before, so each is checked alone."""
    pgconn, name = raw.pgconn, _statement_name(sql)
    prepared = _prepared.setdefault(raw, set())
    if name in prepared:
        result = pgconn.exec_prepared(name, values)
        if _sqlstate(result) != "26000":  # invalid_sql_statement_name: deallocated meanwhile
            return result
        prepared.discard(name)
    made = pgconn.prepare(name, _numbered(sql))
    if _sqlstate(made) != "42P05":  # duplicate_prepared_statement: there already
        _checked(raw, made)
    prepared.add(name)
    return pgconn.exec_prepared(name, values)


def _sqlstate(result: pq.abc.PGresult) -> str | None:
    state = result.error_field(pq.DiagnosticField.SQLSTATE)
    return state.decode() if state else None


def _checked(raw: psycopg.Connection, result: pq.abc.PGresult) -> None:
    """Raise psycopg's error for a failed statement, as its cursor would (with its SQLSTATE and
    diagnostics: Django's error wrapper turns it into Django's, config/outage.py reads it)."""
    if result.status in (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK):
        return
    if raw.pgconn.status == pq.ConnStatus.BAD and _sqlstate(result) is None:
        message = raw.pgconn.error_message.decode(errors="replace").strip()
        raise psycopg.OperationalError(message or "the connection to the server was lost")
    raise psycopg.errors.error_from_result(result, encoding=raw.info.encoding)


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
        params = _append_params(events, expected_seq)
        last = events[-1]
        sql = append_sql(len(events))
        began = time.monotonic()
        with self._cursor() as cursor:
            cursor.execute(sql, params, prepare=True)
            rows = cursor.fetchall()
        logged(self.connection, sql, began)
        if not rows or rows[0][1] != 1:
            raise HeadMoved(f"campaign {last.campaign_id}: the head is not at {expected_seq}")
        return [row[0] for row in rows]

    def append_later(self, events: Sequence[Any], *, expected_seq: int) -> None:
        """`append`, sent with the COMMIT inside a transaction (eventlog/commit.py): one
        statement with the writes queued after it; each event's ``pk`` is set once it has run,
        and a row that refers to one meanwhile says so with `commit.PendingEvent`. A head that
        moved fails the statement, and so the COMMIT."""
        from eventlog import commit

        if not commit.can_queue(self.connection):
            ids = self.append(events, expected_seq=expected_seq)
            for event, pk in zip(events, ids, strict=True):
                event.pk = pk
            return
        append = commit.Append(
            append_ctes(len(events)), _append_params(events, expected_seq), events
        )
        commit.append_later(self.connection, append)

    def rows(self, campaign_id: int, *, after: int = 0, batch: int = 5000) -> Iterator[tuple]:
        sql = select_sql()
        at, loads = _payload_index(), decode
        names = [field.attname for field in event_fields()]
        seq_at, text_at = names.index("seq"), names.index("payload_text")
        while True:
            began = time.monotonic()
            with self._cursor() as cursor:
                cursor.execute(sql, (campaign_id, after, batch), prepare=True)
                rows = cursor.fetchall()
            logged(self.connection, sql, began)
            for row in rows:
                text = row[text_at] if row[at] is None else row[at]
                yield (*row[:at], loads(text), *row[at + 1 :])
            if len(rows) < batch:
                return
            after = rows[-1][seq_at]

    def fetch(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        """A hand-written read as a prepared statement: planned once per connection (for the
        hot path's joins, planning cost the server more than running them)."""
        began = time.monotonic()
        with self._cursor() as cursor:
            cursor.execute(sql, params, prepare=True)
            rows = cursor.fetchall()
        logged(self.connection, sql, began)
        return rows

    def fetch_many(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        began = time.monotonic()
        rows = self._read(sql, params)
        logged(self.connection, sql, began)
        return rows

    def _read(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        with self._cursor() as cursor:
            raw = cursor.connection
            if not raw.autocommit and raw.pgconn.transaction_status == pq.TransactionStatus.IDLE:
                # A transaction psycopg has yet to begin (with its next statement): its cursor
                # begins it, and the read is the transaction's.
                cursor.execute(sql, params)
                return cursor.fetchall()
            return _whole(raw, sql, params)

    def fetch_locked(self, sql: str, params: Sequence[Any]) -> list[tuple]:
        """One statement takes the lock and reads (`locked_read_sql`), as of its start: when
        the lock waited for a holder that committed meanwhile, the same statement again, under
        the lock now held, sees what the holder wrote. A writer that found the lock free (a
        table's checks, seconds apart) makes one round trip; one that queued behind another,
        two. Sending the lock and the read as two statements in one pipeline cost every check
        more (about 0.14 ms of this process's CPU and 0.05 ms of the server's) than the second
        read costs a writer that waited."""
        locked = locked_read_sql(sql)
        rows = self.fetch(locked, params)
        if rows and not rows[0][0]:  # read before a holder it waited for committed
            rows = self.fetch(locked, params)
        return [row[1:] for row in rows]

    def replay_rows(
        self, campaign_id: int, *, after: int = 0, batch: int = 5000
    ) -> Iterator[tuple]:
        # One query, streamed through a server-side cursor (the rebuild's transaction holds it
        # open while the read models are written): pages of `seq > last LIMIT n` would each be
        # planned on their own, and on a table loaded since its last ANALYZE each re-sorted the
        # whole log. The batches are fetched ahead by a thread (`_fetched_ahead`): the server
        # reads the next while the replay decodes and hashes this one.
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
                # Closed before the cursor: the thread must not fetch from a closed one.
                with closing(_fetched_ahead(cursor, batch)) as batches:
                    for rows in batches:
                        for (
                            pk,
                            seq,
                            type_,
                            text,
                            actor,
                            created,
                            visibility,
                            session,
                            scene,
                            chapter,
                            character,
                            prev,
                            hash_,
                        ) in rows:
                            yield (
                                pk,
                                seq,
                                type_,
                                text,
                                actor,
                                created,
                                document_time(created),
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
        # The canonical text (`payload_text`) is read as it is; the jsonb only for a row stored
        # without that text (`Event.payload_text`), decoded here.
        sql = page_sql(
            "%s",
            until is not None,
            len(types),
            columns,
            DOCUMENT_TIME,
            "{}::text",
            "CASE WHEN payload_text IS NULL THEN {} END",
        )
        params = page_params(campaign_id, after, limit, until, types, [v for _, v in context])
        began = time.monotonic()
        rows = self._read(sql, params)
        logged(self.connection, sql, began)
        at, loads = _payload_index(), decode
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
