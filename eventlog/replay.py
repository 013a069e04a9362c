"""Replaying a campaign's log into its read models at disk speed (`rebuild_projections`).

The live projectors (`eventlog.projections`) change rows one event at a time, inside the append's
transaction. A replay runs each type's *replayer* instead: the events come as stored rows (no
model instance), the chain is checked on the way from the stored canonical text, and the read
models are built in memory as the values the database stores, then written in bulk (COPY on
PostgreSQL, one executemany per table on SQLite). No statement runs per event. Tests compare the
tables a replay writes with those the live projectors wrote, column by column.

Most read models of a campaign are small (members, characters, periods, calls, counters) and are
kept whole until the end; a long log is mostly checks, which are kept in a window of the latest
`WINDOW` and written as it slides. A follow-up or reveal of an older check reads that row back
(one query, rare: follow-ups come right after their roll) and writes it back with an UPDATE.

On PostgreSQL the rows that slide out of the window are written behind the replay
(`WriteBehind`): a thread sends their COPY on the replay's own connection and transaction while
the replay goes on, so the server takes them on its own core instead of the replay waiting for
it (that COPY was about a third of a rebuild's time, the server's CPU most of it).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from django.db import DEFAULT_DB_ALIAS, connections, models

from eventlog.chain import (
    UNPARSED,
    document_hash,
    stored_text_hash,
)
from eventlog.intact import GENESIS, ChainBroken, refuse
from eventlog.projections import written_fields
from eventlog.recorders import decode

# Check rows kept in memory during a replay; the oldest half is written as it fills. A batch
# written behind holds the connection while the server takes it, and the rows the replay reads
# next wait for it: batches of 25,000 held it longer than the rows read ahead lasted (and the
# thread gained nothing); batches of 5,000 and 15,000 were slower too (300,000 events on
# PostgreSQL: 12.9 s with 10,000 against 14.2 and 13.9).
WINDOW = 20_000

Replayer = Callable[["Replay", "Replayed"], None]
_replayers: dict[str, list[Replayer]] = {}


def replays(*event_types: str) -> Callable[[Replayer], Replayer]:
    """Register the replayer of event types (each type also has a live projector)."""

    def register(replayer: Replayer) -> Replayer:
        for event_type in event_types:
            _replayers.setdefault(event_type, []).append(replayer)
        return replayer

    return register


def replayed_types() -> set[str]:
    return set(_replayers)


class Replayed:
    """An event as a replay reads it. The ids and `created_at` are in the form the database
    stores them (a read model copies them as they are); `text_id` gives an id's text."""

    __slots__ = (
        "actor_id",
        "campaign_id",
        "chapter_id",
        "character_id",
        "created_at",
        "id",
        "payload",
        "scene_id",
        "seq",
        "session_id",
        "type",
        "visibility",
    )

    @property
    def pk(self) -> int:
        return self.id


class Buffer:
    """Rows of one read model waiting to be written, as field values: each field prepares its
    own (these tables are small); ``stored`` names the fields given in stored form already."""

    def __init__(self, model: type[models.Model], stored: Iterable[str] = ()) -> None:
        self.model = model
        self.fields = written_fields(model)
        self.stored = set(stored)
        self.rows: dict[Any, dict[str, Any]] = {}
        self._serial = 0

    def add(self, key: Any = None, **values: Any) -> dict[str, Any]:
        """A new row (replacing the one under ``key``; None: a row nobody looks up again)."""
        if key is None:
            self._serial += 1
            key = ("row", self._serial)
        self.rows.pop(key, None)  # a re-created row goes last, as a new id would
        for field in self.fields:
            if field.attname not in values:
                values[field.attname] = field.get_default()
        row = self.rows[key] = values
        return row

    def get(self, key: Any) -> dict[str, Any] | None:
        return self.rows.get(key)

    def remove(self, key: Any) -> None:
        self.rows.pop(key, None)

    def write(self) -> None:
        if not self.rows:
            return
        db = connections[DEFAULT_DB_ALIAS]
        prepare = [(field.attname in self.stored or _as_is(field), field) for field in self.fields]
        rows = [
            [
                row[field.attname] if as_is else field.get_db_prep_save(row[field.attname], db)
                for as_is, field in prepare
            ]
            for row in self.rows.values()
        ]
        copy(self.model, self.fields, rows)
        self.rows.clear()


class Replay:
    """The read models of one campaign as a replay builds them."""

    def __init__(self, campaign: Any) -> None:
        self.campaign = campaign
        self.buffers: dict[Any, Any] = {}
        self.owner_changes: dict[str, Any] = {}  # the stream owner's (campaign's) own row
        self.behind = WriteBehind()

    def buffer(self, model: type[models.Model], stored: Iterable[str] = ()) -> Buffer:
        found = self.buffers.get(model)
        if found is None:
            found = self.buffers[model] = Buffer(model, stored)
        return found

    def table(self, key: Any, make: Callable[[], Any]) -> Any:
        """A projector's own in-memory table (made on first use; written by its `write`)."""
        found = self.buffers.get(key)
        if found is None:
            found = self.buffers[key] = make()
        return found

    def text_id(self, stored: Any) -> str | None:
        """A stored UUID's text with dashes, as `str(UUID)` gives it."""
        if stored is None or (isinstance(stored, str) and len(stored) == 36):
            return stored
        return str(stored if isinstance(stored, UUID) else UUID(stored))

    def write(self) -> None:
        if self.owner_changes:
            from eventlog.models import stream_owners

            stream_owners().filter(pk=self.campaign.pk).update(**self.owner_changes)
        for buffer in self.buffers.values():
            buffer.write()


def _as_is(field: models.Field) -> bool:
    """Values the drivers take as they are (every other field prepares its own)."""
    return isinstance(
        field,
        (models.CharField, models.TextField, models.IntegerField, models.BooleanField),
    ) and not (field.choices or isinstance(field, models.ForeignKey))


def copy(model: type[models.Model], fields: list[models.Field], rows: list) -> None:
    from eventlog.recorders import recorder

    recorder().copy_rows(*_target(model, fields), rows)


def _target(model: type[models.Model], fields: list[models.Field]) -> tuple[str, list[str]]:
    """A table's and its columns' quoted names."""
    quote = connections[DEFAULT_DB_ALIAS].ops.quote_name
    return quote(model._meta.db_table), [quote(field.column) for field in fields]


class WriteBehind:
    """Rows written while the replay goes on. On PostgreSQL a thread of its own sends each batch
    as a COPY on the replay's connection (the recorder made in the replay's thread: psycopg's
    connection lock serializes the COPY with the replay's reads), in its transaction, while the
    server takes the rows on the other core. One batch at a time; `wait` before reading what was
    written and before the transaction ends: a batch still queued at a rollback would be
    written outside it. Elsewhere (SQLite, in this process) a batch is written at once."""

    def __init__(self) -> None:
        from eventlog.recorders import recorder

        self._recorder = recorder()
        self._behind = connections[DEFAULT_DB_ALIAS].vendor == "postgresql"
        self._writer: ThreadPoolExecutor | None = None
        self._pending: Future | None = None

    def copy(self, model: type[models.Model], fields: list[models.Field], rows: list) -> None:
        if not self._behind:
            copy(model, fields, rows)
            return
        self.wait()
        if self._writer is None:
            self._writer = ThreadPoolExecutor(1, thread_name_prefix="replay-copy")
        table, columns = _target(model, fields)
        self._pending = self._writer.submit(self._recorder.copy_rows, table, columns, rows)

    def wait(self) -> None:
        """Until the batch sent is written; its error is raised here."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def close(self, *, failed: bool = False) -> BaseException | None:
        """Wait for the batch sent and stop the thread. After a failure (the transaction is
        being rolled back) a batch not begun is dropped, one being written is waited for (it
        holds the connection: the rollback would wait for it anyway), and its error is returned,
        not raised: the replay's own is the one to raise."""
        try:
            if not failed:
                self.wait()
                return None
            pending, self._pending = self._pending, None
            if pending is None or pending.cancel():
                return None
            return pending.exception()
        finally:
            if self._writer is not None:
                self._writer.shutdown(wait=True, cancel_futures=True)


def stored_hash(
    campaign_id: int,
    seq: int,
    type_: str,
    text: str,
    actor: int | None,
    created_text: str,
    visibility: str,
    ids: tuple[str | None, str | None, str | None, str | None],
    prev_hash: str,
    *,
    payload: Any = None,
    decode: bool = False,
) -> str:
    """An event's chain hash from its stored values (`Recorder.replay_rows`; ``payload``: the
    text decoded, if at hand): `eventlog.chain.stored_text_hash`. ``decode``: hash the decoded
    document itself (for a text that is not canonical)."""
    session, scene, chapter, character = ids
    if decode:
        return document_hash(
            {
                "campaign": campaign_id,
                "seq": seq,
                "type": type_,
                "payload": json.loads(text),
                "actor": actor,
                "created_at": created_text,
                "visibility": visibility,
                "session": session,
                "scene": scene,
                "chapter": chapter,
                "character": character,
                "prev_hash": prev_hash,
            }
        )
    return stored_text_hash(
        campaign=campaign_id,
        seq=seq,
        type=type_,
        text=text,
        actor=actor,
        created_at=created_text,
        visibility=visibility,
        session=session,
        scene=scene,
        chapter=chapter,
        character=character,
        prev_hash=prev_hash,
        parsed=UNPARSED if payload is None else payload,
    )


def replay(
    campaign: Any,
    rows: Iterable[tuple],
    on_problem: Callable[[ChainBroken], None] = refuse,
    advance: Callable[[int], None] | None = None,
) -> int:
    """Apply the replayers to a campaign's stored rows (`Recorder.replay_rows`), checking the
    chain as `eventlog.intact.intact` does; then write the read models. Returns the count."""
    state = Replay(campaign)
    try:
        with _without_cycle_collection():
            count = _replay(state, rows, on_problem, advance)
    except BaseException as error:
        written = state.behind.close(failed=True)
        if written is not None:  # a failed COPY aborts the transaction: what failed next says so
            error.add_note(f"before it, the check rows' COPY behind the replay failed: {written!r}")
        raise
    state.behind.close()
    return count


@contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector off for a replay: it allocates a million payloads and rows
    and frees them in order (no cycles), and the collector's passes over the growing heap took
    a fifth of a rebuild's time. Back on afterwards, as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _replay(
    state: Replay,
    rows: Iterable[tuple],
    on_problem: Callable[[ChainBroken], None],
    advance: Callable[[int], None] | None,
) -> int:
    campaign = state.campaign
    campaign_id = campaign.pk
    get = _replayers.get
    due, previous, count = 1, GENESIS, 0
    for (
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
        ids,
        prev_hash,
        hash_,
    ) in rows:
        payload = decode(text)
        if seq != due:
            on_problem(ChainBroken(campaign_id, seq, f"seq {due} is missing"))
        elif prev_hash != previous:
            on_problem(ChainBroken(campaign_id, seq, "not chained to the event before"))
        else:
            stored = (campaign_id, seq, type_, text, actor, created_text, visibility, ids)
            # A text that is not canonical (a row appended without `payload_text` on PostgreSQL,
            # read as its jsonb's text) is hashed as the decoded document.
            if (
                stored_hash(*stored, prev_hash, payload=payload) != hash_
                and stored_hash(*stored, prev_hash, decode=True) != hash_
            ):
                on_problem(ChainBroken(campaign_id, seq, "its hash does not match its content"))
        due, previous = seq + 1, hash_
        event = Replayed()
        event.id, event.seq, event.type, event.payload = pk, seq, type_, payload
        event.actor_id, event.created_at, event.visibility = actor, created, visibility
        event.session_id, event.scene_id, event.chapter_id = session, scene, chapter
        event.character_id, event.campaign_id = character, campaign_id
        for replayer in get(type_, ()):
            replayer(state, event)
        count += 1
        if advance is not None and not count % 1000:
            advance(1000)
    if (due - 1, previous) != (campaign.head_seq, campaign.head_hash):
        on_problem(ChainBroken(campaign_id, campaign.head_seq, "the head is not the last event"))
    state.write()
    if advance is not None:
        advance(count % 1000)
    return count
