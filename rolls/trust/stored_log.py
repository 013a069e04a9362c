"""Verification of the stored logs: the server side of `rolls.trust.verify`, with the same checks.

The server reads every event in full (the GM's view), so every roll is proven, hidden ones too,
from the key its event records; the report names events and problems, never a key or a face.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, TextIO

from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext

from campaign.models import Campaign, Membership
from eventlog.chain import (
    GENESIS,
    SEALED_PUBLIC_KEYS,
    UNPARSED,
    canonical_json,
    document_hash,
    event_document,
    json_text,
    stored_text_hash,
)
from eventlog.event_types import (
    CAMPAIGN_CREATED,
    CAMPAIGN_OPTIONS_CHANGED,
    SESSION_ENDED,
    SESSION_STARTED,
)
from eventlog.models import Event
from eventlog.progress import Progress
from rolls.models import VerificationCheckpoint, VerifiedSession
from rolls.reads.present import hidden_seqs
from rolls.trust.verify import (
    _MALFORMED,
    FOLLOWUP_SYSTEMS,
    MAX_PROBLEMS,
    Problem,
    SessionSummary,
    StreamReport,
    StreamVerifier,
)

_COLUMNS = (
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


@dataclass
class Report:
    events: int = 0
    problems: list[Problem] = field(default_factory=list)
    campaigns: list[StreamReport] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)

    @property
    def failed_campaigns(self) -> int:
        """How many campaigns failed (``problems`` lists every problem, several per campaign)."""
        return sum(1 for campaign in self.campaigns if not campaign.ok)

    @property
    def lines(self) -> list[str]:
        """Per campaign, what was proven and every problem (made when asked for: a long log's
        sessions are read in for it, `StreamReport.all_sessions`)."""
        lines = []
        for result in self.campaigns:
            status = "ok  " if result.ok else "FAIL"
            lines.append(
                f"{status} campaign {result.campaign} ({self.names.get(result.campaign, '')}): "
                f"{result.events:,} events, {result.sessions_proven} closed session(s) proven"
            )
            lines += result.detail_lines(indent="     ")
        return lines

    @property
    def sessions(self) -> list[dict[str, Any]]:
        """Per session, for pages: is it proven, the first problem within it or else its
        summary, its receipt."""
        rows = []
        for result in self.campaigns:
            for session in result.all_sessions():
                last = session.ended_seq or result.events
                inside = [
                    p for p in result.problems if p.seq and session.started_seq <= p.seq <= last
                ]
                rows.append(
                    {
                        "campaign": result.campaign,
                        "session": session.session_id,
                        "number": session.number,
                        "closed": session.ended_seq is not None,
                        "ok": session.ok and not inside,
                        # The truth: a page tells it as its viewer may be told
                        # (`problems_told_to` of ``problem``).
                        "what": str(inside[0]) if inside else session.describe(),
                        "problem": inside[0] if inside else None,
                        "server_rolls": session.server_rolls,
                        "proven": session.proven,
                        "manual_rolls": session.manual_rolls,
                        "final_seq": session.final_seq,
                        "final_hash": session.final_hash,
                    }
                )
        return rows


def event_rows(
    campaign_id: int, *, after: int = 0, until: int | None = None
) -> Iterator[dict[str, Any]]:
    """A campaign's events as the plain dicts `rolls.trust.verify` checks (and exports carry),
    the payload as the application reads it (on PostgreSQL: its jsonb)."""
    for fields, _ in _proof_rows(campaign_id, after=after, until=until):
        yield fields


def _as_rows(campaign_id: int, events: QuerySet[Event]) -> Iterator[dict[str, Any]]:
    rows = events.order_by("seq").values_list(*_COLUMNS).iterator(5000)
    for row in rows:
        yield event_document(campaign_id, *row)


_RAW_SQL = (
    "SELECT seq, type, {payload}, actor_id, {created}, visibility, {session}, {scene}, "
    "{chapter}, {character}, prev_hash, hash{extra} FROM {table} "
    "WHERE campaign_id = %s AND seq > %s AND seq <= %s ORDER BY seq"
)
_FOREVER = 2**63 - 1
READ_WINDOW = 10_000  # seqs per query


def _sqlite_uuid(column: str) -> str:
    """SQLite keeps a UUID as 32 hex digits: as text with its dashes (NULL stays NULL)."""
    parts = [f"substr({column}, {a}, {n})" for a, n in ((1, 8), (9, 4), (13, 4), (17, 4))]
    return " || '-' || ".join([*parts, f"substr({column}, 21)"])


_CONTEXT = ("session", "scene", "chapter", "character")
_FORMATS = {
    # The event document's own forms (eventlog.chain.event_document), made by the database.
    "sqlite": {
        # Naive UTC text, with microseconds only when there are some.
        "created": "replace(created_at, ' ', 'T') || CASE WHEN instr(created_at, '.') "
        "THEN '' ELSE '.000000' END || '+00:00'",
        **{name: _sqlite_uuid(f"{name}_id") for name in _CONTEXT},
    },
    "postgresql": {
        "created": "to_char(created_at AT TIME ZONE 'UTC', "
        '\'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"\')',
        **{name: f"{name}_id::text" for name in _CONTEXT},
    },
}


def raw_chain_rows(
    campaign_id: int,
    until: int,
    *,
    after: int = 0,
    hashed_text: bool = True,
    payload_sql: str | None = None,
    extra: str = "",
) -> Iterator[tuple]:
    """The fields the chain covers, straight from the database, as the event document has them
    (ids and the time as text, formatted by the database): no ORM objects, the payload as stored
    text. ``hashed_text``: the canonical JSON the hash covers (`Event.payload_text` on
    PostgreSQL; SQLite's payload column is that text); otherwise, on PostgreSQL, the jsonb the
    application reads, as PostgreSQL writes it (not canonical). ``payload_sql``: the payload's
    expression instead; ``extra``: columns after the hash (`_proof_rows`')."""
    if payload_sql is not None:
        payload = payload_sql
    elif connection.vendor == "sqlite":
        payload = "payload"
    elif hashed_text:
        payload = "COALESCE(payload_text, payload::text)"  # rows appended without it
    else:
        payload = "payload::text"
    formats = _FORMATS[connection.vendor]
    sql = _RAW_SQL.format(payload=payload, table=Event._meta.db_table, extra=extra, **formats)
    # In windows of seqs: PostgreSQL's client-side cursor would hold the whole result in memory
    # (a million rows: gigabytes); each window is one range scan of the (campaign, seq) index.
    with connection.cursor() as cursor:
        if until == _FOREVER:  # to the last stored event, whatever the head says
            cursor.execute(
                f"SELECT max(seq) FROM {Event._meta.db_table} WHERE campaign_id = %s",
                [campaign_id],
            )
            until = cursor.fetchone()[0] or 0
        while after < until:
            end = min(after + READ_WINDOW, until)
            cursor.execute(sql, [campaign_id, after, end])
            yield from cursor.fetchall()
            after = end


def _fields(campaign_id: int, row: tuple) -> tuple[dict[str, Any], str]:
    """A raw row as the event document (payload still as its stored text) and its hash."""
    seq, type_, payload, actor, created, visibility, *context, prev_hash, hash_ = row
    session, scene, chapter, character = context
    fields = {
        "campaign": campaign_id,
        "seq": seq,
        "type": type_,
        "payload": payload,
        "actor": actor,
        "created_at": created,
        "visibility": visibility,
        "session": session,
        "scene": scene,
        "chapter": chapter,
        "character": character,
        "prev_hash": prev_hash,
    }
    return fields, hash_


_CHAIN_SQL = (
    # chain_intact's columns, JSON-ready: ids quoted or null, the type as a JSON string.
    "SELECT seq, prev_hash, hash, visibility, {payload}, COALESCE({actor}, 'null'), {created}, "
    "{session}, {scene}, {chapter}, {character}, {type} FROM {table} "
    "WHERE campaign_id = %s AND seq > %s AND seq <= %s ORDER BY seq"
)


def _chain_sql(vendor: str) -> str:
    formats = _FORMATS[vendor]
    quoted = {name: f"""COALESCE('"' || {formats[name]} || '"', 'null')""" for name in _CONTEXT}
    if vendor == "sqlite":
        payload, actor, type_ = "payload", "CAST(actor_id AS TEXT)", "json_quote(type)"
    else:
        payload, actor, type_ = (
            "COALESCE(payload_text, payload::text)",
            "actor_id::text",
            ("to_json(type)::text"),
        )
    return _CHAIN_SQL.format(
        payload=payload, actor=actor, created=formats["created"], type=type_,
        table=Event._meta.db_table, **quoted,
    )  # fmt: skip


def chain_intact(campaign_id: int, *, until: int, head_hash: str) -> bool:
    """The chain alone, fast: seqs 1..until without gaps, every link, every hash, ending at
    ``head_hash``. Each event is hashed from its stored canonical payload text as is: one
    SHA-256 over a string assembled around it from columns the database hands over JSON-ready
    (`_fast_hash`'s string, inlined; a hidden event's payload decoded only for the keys its
    sealed document shows). An event that does not hash so (a text that is not canonical: a row
    appended without `payload_text`) is decoded and re-encoded. Says only whether the chain
    holds: the full pass names what does not."""
    expected, prev, sha256 = 1, GENESIS, hashlib.sha256
    sql = _chain_sql(connection.vendor)
    with connection.cursor() as cursor:
        for start in range(0, until, READ_WINDOW):
            cursor.execute(sql, [campaign_id, start, min(start + READ_WINDOW, until)])
            for row in cursor.fetchall():
                seq, prev_hash, hash_, visibility, payload, actor, created, *rest = row
                session, scene, chapter, character, type_ = rest
                if seq != expected or prev_hash != prev:
                    return False
                if visibility != "public":
                    payload, character = _sealed_text(payload, character)
                document = (
                    f'{{"actor":{actor},"campaign":{campaign_id},"chapter":{chapter},'
                    f'"character":{character},"created_at":"{created}","payload":{payload},'
                    f'"prev_hash":"{prev_hash}","scene":{scene},"seq":{seq},'
                    f'"session":{session},"type":{type_},"visibility":{json_text(visibility)}}}'
                )
                if sha256(document.encode()).hexdigest() != hash_ and not _hashes_the_long_way(
                    campaign_id, seq
                ):
                    return False
                expected, prev = seq + 1, hash_
    return expected - 1 == until and prev == head_hash


def _sealed_text(payload: str, character: str) -> tuple[str, str]:
    """A hidden event's payload and character as its hashed document has them (JSON text):
    eventlog.chain.sealed_payload over the stored text, and no character."""
    digest = hashlib.sha256(f'{{"character":{character},"payload":{payload}}}'.encode())
    try:
        parsed = json.loads(payload)
        public = {key: parsed[key] for key in SEALED_PUBLIC_KEYS if key in parsed}
    except (ValueError, TypeError):
        return "", "null"  # not an object: the long way says
    return canonical_json({**public, "sealed": digest.hexdigest()}), "null"


def _hashes_the_long_way(campaign_id: int, seq: int) -> bool:
    """Does the event hash as `eventlog.chain.document_hash` has it, its payload decoded and
    encoded again? (A row appended without `payload_text`.)"""
    (row,) = raw_chain_rows(campaign_id, seq, after=seq - 1)
    fields, hash_ = _fields(campaign_id, row)
    try:
        fields["payload"] = json.loads(fields["payload"])
    except ValueError:
        return False
    return document_hash(fields) == hash_


# The catalog's word that PostgreSQL's jsonb payload is generated from the canonical text
# (eventlog.0007): a boolean, NULL when the column has no expression. No table may inherit from
# the log's: its rows would be read with the log's, under a generation expression of its own.
_GENERATED_FROM_TEXT = (
    "(SELECT a.attgenerated = 's' AND pg_get_expr(d.adbin, d.adrelid) = '(payload_text)::jsonb' "
    "AND NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhparent = a.attrelid) "
    "FROM pg_attribute a JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
    f"WHERE a.attrelid = '{Event._meta.db_table}'::regclass AND a.attname = 'payload')"
)


def _one_payload_copy() -> bool:
    """Is every stored payload text the payload the application reads? SQLite keeps one copy;
    PostgreSQL two (the jsonb and `Event.payload_text`), equal by construction while the jsonb
    is a column generated from the text. Whoever takes the expression away to edit one copy (the
    owner) leaves a plain column: then the copies are compared row by row (`_copies_agree`, and
    the full proof decodes the jsonb)."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COALESCE({_GENERATED_FROM_TEXT}, false)")
        return cursor.fetchone()[0]


def _copies_agree(campaign_id: int, *, until: int) -> bool:
    """PostgreSQL: is every event's jsonb payload (what the application reads, and the full
    proof hashes) the canonical text the fast chain hashes? The jsonb is generated from the text;
    this finds a row edited in place since the owner took the expression away. Costs a JSON
    parse per row in the database, unless the column is still generated: `verify_log --rehash`
    only."""
    if _one_payload_copy():
        return True
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM {Event._meta.db_table} WHERE campaign_id = %s AND seq <= %s "
            "AND payload_text IS NOT NULL AND NOT (payload_text::jsonb = payload) LIMIT 1",
            [campaign_id, until],
        )
        return cursor.fetchone() is None


def _proof_rows(
    campaign_id: int, *, after: int, until: int | None
) -> Iterator[tuple[dict[str, Any], bool]]:
    """The events for the full proof, payload decoded once, each with whether its hash was
    already checked here from the stored canonical text (`_fast_hash`, no re-encoding). That text
    is the payload the application reads on SQLite, and on PostgreSQL while the jsonb is
    generated from it (`_one_payload_copy`); otherwise the jsonb is decoded and the verifier
    hashes what it holds."""
    until = _FOREVER if until is None else until
    if connection.vendor == "sqlite":
        rows = ((*row, True) for row in raw_chain_rows(campaign_id, until, after=after))
    else:  # the column's state read with the rows, not in a round trip of its own
        one_copy = _GENERATED_FROM_TEXT
        rows = raw_chain_rows(
            campaign_id,
            until,
            after=after,
            payload_sql=f"CASE WHEN {one_copy} THEN COALESCE(payload_text, payload::text) "
            "ELSE payload::text END",
            extra=f", COALESCE({one_copy}, false)",
        )
    for *row, one_copy in rows:
        fields, hash_ = _fields(campaign_id, row)
        payload = json.loads(fields["payload"])
        checked = one_copy and _fast_hash(fields, payload) == hash_
        fields["payload"] = payload
        fields["hash"] = hash_
        yield fields, checked


def _fast_hash(fields: dict[str, Any], parsed: Any = UNPARSED) -> str:
    """`eventlog.chain.stored_text_hash` of an event document whose payload is the stored text."""
    return stored_text_hash(
        campaign=fields["campaign"],
        seq=fields["seq"],
        type=fields["type"],
        text=fields["payload"],
        actor=fields["actor"],
        created_at=fields["created_at"],
        visibility=fields["visibility"],
        session=fields["session"],
        scene=fields["scene"],
        chapter=fields["chapter"],
        character=fields["character"],
        prev_hash=fields["prev_hash"],
        parsed=parsed,
    )


def _earlier_events(campaign_id: int, target: int, before: int) -> list[dict[str, Any]]:
    """A check.rolled and its follow-ups before ``before``, for a verifier resumed after it."""
    events = Event.objects.filter(campaign_id=campaign_id).filter(
        Q(seq=target) | Q(type__in=FOLLOWUP_SYSTEMS, payload__check_seq=target, seq__lt=before)
    )
    return list(_as_rows(campaign_id, events))


def _checkpoint_holds(campaign: Campaign, checkpoint: VerificationCheckpoint) -> str | None:
    """None if the log still has the checkpoint's event with its hash, else what changed."""
    stored_hash = checkpoint.stored_hash  # annotated by _checkpoint: the same query
    when = checkpoint.verified_at.isoformat(timespec="seconds")
    if stored_hash is None:
        return (
            f"event #{checkpoint.seq}, verified on {when}, is gone: the log was cut back "
            "(an older backup restored?)"
        )
    if stored_hash != checkpoint.hash:
        return (
            f"event #{checkpoint.seq} no longer has the hash verified on {when}: "
            "history was rewritten since"
        )
    return None


def _checkpoint(campaign: Campaign) -> VerificationCheckpoint | None:
    """The stored checkpoint, with the hash its event has in the log now (``stored_hash``)."""
    # Raw SQL: compiling the ORM's subquery cost more CPU than carrying on after one event.
    table, events = VerificationCheckpoint._meta.db_table, Event._meta.db_table
    found = VerificationCheckpoint.objects.raw(
        f"SELECT c.*, (SELECT e.hash FROM {events} e WHERE e.campaign_id = c.campaign_id "
        f"AND e.seq = c.seq) AS stored_hash FROM {table} c WHERE c.campaign_id = %s",
        [campaign.pk],
    )
    return next(iter(found), None)


def _store(campaign: Campaign, state: dict[str, Any], *, from_scratch: bool) -> None:
    """Keep the verifier's state as the campaign's checkpoint. It is a cache of a computation
    anyone can repeat (the log is the evidence, not this row): its commit need not wait for the
    disk on PostgreSQL, and losing it in a crash only means proving those events again.

    Closed sessions move out of the state into their own rows (`VerifiedSession`): the state
    keeps only the open one, so that carrying on costs the same at the thousandth session as
    at the first. ``from_scratch``: the state covers the log from its first event (the rows of
    an earlier verification go)."""
    seq, hash_ = state["last"]
    state = dict(state)
    sessions, before, open_index = (
        state["sessions"],
        state["sessions_before"],
        state["open_session"],
    )
    closed = sessions if open_index is None else sessions[:open_index]
    kept = [] if open_index is None else sessions[open_index:]
    state.update(
        sessions=kept,
        sessions_before=before + len(closed),
        open_session=None if open_index is None else 0,
    )
    values = {"seq": seq, "hash": hash_, "ok": not state["problems"], "state": state}
    one_statement = connection.vendor == "postgresql" and not connection.in_atomic_block
    if (
        one_statement
        and not closed
        and not from_scratch
        and _update_checkpoint(campaign.pk, values, asynchronous=True)
    ):
        return  # the usual case, carrying on within a session: one round trip
    with _not_durable(), transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO off")
        if from_scratch:  # (otherwise the rows end at `before`: written with the checkpoint)
            VerifiedSession.objects.filter(campaign=campaign).delete()
        VerifiedSession.objects.bulk_create(
            VerifiedSession(campaign=campaign, index=before + i, summary=summary)
            for i, summary in enumerate(closed)
        )
        if not _update_checkpoint(campaign.pk, values):
            VerificationCheckpoint.objects.create(campaign=campaign, **values)


def _update_checkpoint(
    campaign_id: int, values: dict[str, Any], *, asynchronous: bool = False
) -> bool:
    """UPDATE the stored checkpoint (raw SQL, as `_checkpoint` reads it); False: none yet.
    ``asynchronous`` (PostgreSQL, outside a transaction): the statement is its own transaction
    and sets its commit not to wait for the disk (as `_store`'s SET LOCAL does)."""
    fields = [*values, "verified_at"]
    model = VerificationCheckpoint._meta
    params = [
        model.get_field(name).get_db_prep_save(value, connection)
        for name, value in [*values.items(), ("verified_at", timezone.now())]
    ]
    assignments = ", ".join(f"{model.get_field(name).column} = %s" for name in fields)
    sql = f"UPDATE {model.db_table} SET {assignments} WHERE campaign_id = %s"
    if asynchronous:
        sql = (
            "WITH asynchronous AS (SELECT set_config('synchronous_commit', 'off', true)) "
            f"{sql} AND EXISTS (SELECT 1 FROM asynchronous)"
        )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, campaign_id])
        return cursor.rowcount > 0


def _kept_sessions(campaign_id: int) -> list[SessionSummary]:
    """The closed sessions `_store` kept apart, in order."""
    summaries = VerifiedSession.objects.filter(campaign_id=campaign_id).order_by("index")
    return [SessionSummary(**summary) for summary in summaries.values_list("summary", flat=True)]


@contextlib.contextmanager
def _not_durable() -> Iterator[None]:
    """SQLite: this commit need not wait for the disk either (the WAL is synced by the next
    commit that does; settings.py keeps synchronous=FULL for everything else). PostgreSQL's is
    set inside the transaction."""
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA synchronous = NORMAL")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA synchronous = FULL")


def verify_campaign(
    campaign: Campaign,
    *,
    rehash: bool = False,
    fresh: bool = False,
    progress: Progress | None = None,
    workers: int = 1,
) -> StreamReport:
    """Carry the campaign's stored verification on from its checkpoint to the head.

    The whole log is proven the first time, with ``fresh``, or when the checkpoint's event no
    longer has the hash it verified (the log changed under a verification already made: that is
    reported as a problem, and stays in the checkpoint until ``fresh``); otherwise only the
    events after the checkpoint are read and proven (one new event: a few queries).

    The checkpoint vouches for the events below it only as far as the database does: an event
    rewritten in place *without* re-hashing the chain (which needs the table owner's rights, see
    docs/verification.md P8) leaves the checkpoint's hash standing. ``rehash`` re-hashes the chain
    below the checkpoint first (the fast chain check), which catches that; the full pass then
    names the event.

    ``workers`` > 1: a long stretch to prove (≥ PARALLEL_MIN events) is proven per session in
    that many processes (`_prove_in_parallel`), with the same report as one pass.
    """
    checkpoint = None if fresh else _checkpoint(campaign)
    changed = _checkpoint_holds(campaign, checkpoint) if checkpoint else None
    if checkpoint and not changed and rehash:
        intact = chain_intact(campaign.pk, until=checkpoint.seq, head_hash=checkpoint.hash)
        if intact and not _copies_agree(campaign.pk, until=checkpoint.seq):
            intact = False  # the jsonb the app reads is not the text hashed
        changed = None if intact else ""  # the full pass below names the edited event
    options = {
        "system": campaign.system,
        "earlier_events": partial(_earlier_events, campaign.pk),
    }
    if checkpoint is None or changed is not None:
        verifier, after = StreamVerifier(campaign.pk, **options), 0
        if changed:
            verifier.note(changed)
    else:
        verifier = StreamVerifier.resume(campaign.pk, checkpoint.state, **options)
        after = checkpoint.seq
    if after < campaign.head_seq:
        segments = _session_segments(campaign.pk, verifier, after, campaign.head_seq, workers)
        if len(segments) > 1:
            verifier = _prove_in_parallel(campaign, verifier, segments, workers, options)
            if progress:
                progress.advance(campaign.head_seq - after)
        else:
            rows = _proof_rows(campaign.pk, after=after, until=campaign.head_seq)
            for row, hash_checked in _counted(rows, progress) if progress else rows:
                verifier.feed(row, hash_checked=hash_checked)
    state = verifier.snapshot()
    if state["last"][0] and (after == 0 or state["last"][0] != checkpoint.seq):
        _store(campaign, state, from_scratch=after == 0)  # nothing new: nothing to write
    report = verifier.finish(head_seq=campaign.head_seq, head_hash=campaign.head_hash)
    report.earlier_sessions = partial(_kept_sessions, campaign.pk)
    return report


# --- the full proof in parallel, per session -----------------------------------------------------

PARALLEL_MIN = 20_000  # events to prove (a second or more) before processes pay for themselves
SEGMENT_MIN = 5_000  # events per segment at least: each costs a query and a merge
_SEGMENT_TYPES = (CAMPAIGN_CREATED, CAMPAIGN_OPTIONS_CHANGED, SESSION_STARTED, SESSION_ENDED)


def _session_segments(
    campaign_id: int, verifier: StreamVerifier, after: int, until: int, workers: int
) -> list[tuple[int, int, dict[str, Any] | None]]:
    """Where the events after..until can be cut for `_prove_in_parallel`: at session.started
    events before which no session is open, each segment with the verifier state it starts from
    (None: the first, which carries ``verifier`` on). One segment: prove them in one pass.

    A session start is a clean cut: it resets the key chain, so what a segment needs from the
    events before it is only the rules in force, how many sessions came before, and the last
    event's seq and hash. A stream that is not so clean (a session never ended, an unreadable
    rules event) is simply not cut there."""
    if workers < 2 or until - after < PARALLEL_MIN or connection.in_atomic_block:
        return [(after, until, None)]  # (forked workers see only what is committed)
    state = verifier.snapshot()
    system, options = state["system"], dict(state["options"])
    sessions = state["sessions_before"] + len(state["sessions"])
    open_index = state["open_session"]
    open_id = None if open_index is None else state["sessions"][open_index]["session_id"]
    payload = "payload" if connection.vendor == "sqlite" else "payload::text"
    table = Event._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT seq, type, {payload} FROM {table} WHERE campaign_id = %s AND seq > %s "
            f"AND seq <= %s AND type IN ({', '.join(['%s'] * len(_SEGMENT_TYPES))}) ORDER BY seq",
            [campaign_id, after, until, *_SEGMENT_TYPES],
        )
        rows = cursor.fetchall()
    cuts: list[tuple[int, dict[str, Any]]] = []
    for seq, type_, text in rows:
        try:
            body = json.loads(text)
            if type_ == CAMPAIGN_CREATED:
                system, options = body["system"], dict(body["options"])
            elif type_ == CAMPAIGN_OPTIONS_CHANGED:
                options = dict(body["options"])
            elif type_ == SESSION_ENDED:
                if open_id is not None and str(body.get("id")) == open_id:
                    open_id = None
            else:
                if open_id is None and seq > after + 1:
                    cuts.append((seq, _segment_state(seq, system, options, sessions)))
                open_id, sessions = str(body.get("id")), sessions + 1
        except _MALFORMED:
            return [(after, until, None)]  # the one pass says what is wrong with it
    # Balance: about four segments per worker, of similar lengths.
    target = max((until - after) // (workers * 4), SEGMENT_MIN)
    kept, start = [], after
    for seq, state_at in cuts:
        if seq - 1 - start >= target:
            kept.append((seq, state_at))
            start = seq - 1
    bounds = [after] + [seq - 1 for seq, _ in kept] + [until]
    states: list[dict[str, Any] | None] = [None] + [state_at for _, state_at in kept]
    return [(bounds[i], bounds[i + 1], states[i]) for i in range(len(states))]


def _segment_state(seq: int, system: Any, options: dict, sessions: int) -> dict[str, Any]:
    """StreamVerifier.snapshot's form, as a verifier stands before a clean session start."""
    return {
        "next_seq": seq,  # filled in with the stored event before it (_prove_segment)
        "prev_hash": None,
        "last": [seq - 1, None],
        "system": system,
        "options": options,
        "next_key": None,
        "commitment_seq": 0,
        "key_index": 0,
        "open_session": None,
        "events": 0,
        "redacted": 0,
        "unlisted": 0,
        "problems": [],
        "sessions": [],
        # How many sessions came before: the worker stands them in (`_prove_segment`) and hands
        # back only its own, so that no segment carries the whole log's sessions to and fro.
        "sessions_before": sessions,
    }


def _own_connections() -> None:
    """In a forked worker: database connections of its own. The parent closed its connections
    before forking, but on PostgreSQL they went back to its connection pool, whose sockets and
    threads must stay the parent's: the worker forgets that pool and opens its own."""
    from django.db import connections

    for each in connections.all(initialized_only=True):
        each.connection = None
        pools = getattr(type(each), "_connection_pools", None)
        if pools:
            pools.clear()


def _worker_started() -> None:
    """A pool worker's start: connections of its own, kept for every segment it proves (a
    connection per segment cost more than a short segment's proof) and closed as it exits."""
    from multiprocessing.util import Finalize

    _own_connections()
    Finalize(None, connection.close, exitpriority=10)


def _prove_segment(
    campaign_id: int, system: str, after: int, until: int, state: dict[str, Any] | None
) -> dict[str, Any]:
    """One worker's share: the events after..until, from ``state``; its snapshot."""
    options = {"system": system, "earlier_events": partial(_earlier_events, campaign_id)}
    table = Event._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT seq, hash FROM {table} WHERE campaign_id = %s AND seq <= %s "
            "ORDER BY seq DESC LIMIT 1",
            [campaign_id, after],
        )
        before = cursor.fetchone() or (0, GENESIS)
    state = {**state, "next_seq": before[0] + 1, "prev_hash": before[1], "last": list(before)}
    verifier = StreamVerifier.resume(campaign_id, state, **options)
    for row, hash_checked in _proof_rows(campaign_id, after=after, until=until):
        verifier.feed(row, hash_checked=hash_checked)
    return verifier.snapshot()


def _prove_in_parallel(
    campaign: Campaign,
    verifier: StreamVerifier,
    segments: list[tuple[int, int, dict[str, Any] | None]],
    workers: int,
    options: dict[str, Any],
) -> StreamVerifier:
    """Prove the segments in ``workers`` processes and merge what they found, in order, into
    one verifier standing at the last event: the same report as a single pass."""
    import multiprocessing

    from django.db import connections

    first_after, first_until, _ = segments[0]
    jobs = [(campaign.pk, campaign.system, a, u, s) for a, u, s in segments[1:]]
    connections.close_all()  # the workers are forked: none may share this process's connection
    pool = multiprocessing.get_context("fork").Pool(workers, initializer=_worker_started)
    try:
        pending = pool.starmap_async(_prove_segment, jobs)
        for row, hash_checked in _proof_rows(campaign.pk, after=first_after, until=first_until):
            verifier.feed(row, hash_checked=hash_checked)
        results = pending.get()
        pool.close()  # the workers exit on their own, closing their connections
        pool.join()
    finally:
        pool.terminate()
    merged = verifier.snapshot()
    placeholder = vars(SessionSummary(number=None, session_id="", started_seq=0))
    for result in results:
        # A worker's sessions come after the `sessions_before` it counted: as one pass lists
        # them (a count that disagrees is the stream's problem, reported by the verifiers).
        count = merged["sessions_before"] + len(merged["sessions"])
        missing = result["sessions_before"] - count
        merged["sessions"] += [dict(placeholder) for _ in range(missing)]
        merged["sessions"] += result["sessions"][max(-missing, 0) :]
        if result["open_session"] is not None:
            result["open_session"] += len(merged["sessions"]) - len(result["sessions"])
        merged["problems"] += result["problems"]
        for key in ("events", "redacted", "unlisted"):
            merged[key] += result[key]
        for key in ("next_seq", "prev_hash", "last", "system", "options", "next_key"):
            merged[key] = result[key]
        for key in ("commitment_seq", "key_index", "open_session"):
            merged[key] = result[key]
    overflow = len(merged["problems"]) - MAX_PROBLEMS
    if overflow > 0:
        merged["problems"], merged["unlisted"] = (
            merged["problems"][:MAX_PROBLEMS],
            (merged["unlisted"] + overflow),
        )
    return StreamVerifier.resume(campaign.pk, merged, **options)


def verify_campaigns(
    *,
    campaign_ids: list[int] | None = None,
    progress_stream: TextIO | None = None,
    rehash: bool = False,
    fresh: bool = False,
    workers: int = 1,
) -> Report:
    campaigns = Campaign.objects.order_by("pk")
    if campaign_ids:
        campaigns = campaigns.filter(pk__in=campaign_ids)
    report = Report()
    progress = None
    if progress_stream:
        total = Event.objects.filter(campaign__in=campaigns).count()
        progress = Progress(total, "verify", stream=progress_stream)
    for campaign in campaigns:
        result = verify_campaign(
            campaign, rehash=rehash, fresh=fresh, progress=progress, workers=workers
        )
        report.campaigns.append(result)
        report.names[campaign.pk] = campaign.name
        report.events += result.events
        report.problems += result.problems
    if progress:
        progress.close()
    return report


def _counted(rows: Iterator[Any], progress: Progress) -> Iterator[Any]:
    for row in rows:
        yield row
        progress.advance()


def problems_told_to(problems: list[Problem], viewer: Membership) -> list[str]:
    """What ``viewer`` is told of the problems found: a problem with an event they may not see
    names the event, not what is wrong with its content (its faces, its outcome)."""
    hidden = hidden_seqs(
        viewer.campaign_id, viewer, among={p.seq for p in problems if p.seq is not None}
    )
    told: list[str] = []
    for problem in problems:
        if problem.seq in hidden:
            problem = replace(problem, what=gettext("its content is hidden from you"))
        if str(problem) not in told:  # several problems of one hidden event say it once
            told.append(str(problem))
    return told
