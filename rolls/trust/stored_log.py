"""Verification of the stored logs: the server side of `rolls.trust.verify`, with the same checks.

The server reads every event in full (the GM's view), so every roll is proven, hidden ones too,
from the key its event records; the report names events and problems, never a key or a face.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TextIO

from django.db import connection, transaction
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from campaign.models import Campaign
from eventlog.chain import (
    GENESIS,
    SEALED_PUBLIC_KEYS,
    canonical_json,
    document_hash,
    event_document,
    timestamp,
)
from eventlog.models import Event
from eventlog.progress import Progress
from rolls.models import VerificationCheckpoint
from rolls.trust.verify import (
    FOLLOWUP_SYSTEMS,
    Problem,
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
    lines: list[str] = field(default_factory=list)
    campaigns: list[StreamReport] = field(default_factory=list)

    @property
    def failed_campaigns(self) -> int:
        """How many campaigns failed (``problems`` lists every problem, several per campaign)."""
        return sum(1 for campaign in self.campaigns if not campaign.ok)

    @property
    def sessions(self) -> list[dict[str, Any]]:
        """Per session, for pages: is it proven, the first problem within it or else its
        summary, its receipt."""
        rows = []
        for result in self.campaigns:
            for session in result.sessions:
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
                        "what": str(inside[0]) if inside else session.describe(),
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
    "SELECT seq, type, {payload}, actor_id, created_at, visibility, session_id, scene_id, "
    "chapter_id, character_id, prev_hash, hash FROM {table} "
    "WHERE campaign_id = %s AND seq > %s AND seq <= %s ORDER BY seq"
)
_FOREVER = 2**63 - 1


def raw_chain_rows(
    campaign_id: int, until: int, *, after: int = 0, hashed_text: bool = True
) -> Iterator[tuple]:
    """The columns the chain covers, straight from the database: no ORM objects, the payload as
    stored text. ``hashed_text``: the canonical JSON the hash covers (`Event.payload_text` on
    PostgreSQL; SQLite's payload column is that text); otherwise, on PostgreSQL, the jsonb the
    application reads, as PostgreSQL writes it (not canonical)."""
    if connection.vendor == "sqlite":
        payload = "payload"
    elif hashed_text:
        payload = "COALESCE(payload_text, payload::text)"  # rows appended without it
    else:
        payload = "payload::text"
    sql = _RAW_SQL.format(payload=payload, table=Event._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(sql, [campaign_id, after, until])
        while rows := cursor.fetchmany(5000):
            yield from rows


def _iso(created: Any) -> str:
    if not isinstance(created, str):
        return timestamp(created)
    day, _, clock = created.partition(" ")  # SQLite: naive UTC, microseconds only if any
    return f"{day}T{clock if '.' in clock else clock + '.000000'}+00:00"


def _uuid(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    if len(text) == 32:  # SQLite keeps UUIDs as 32 hex digits
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
    return text


def _quoted(value: str | None) -> str:
    return "null" if value is None else f'"{value}"'


def _fields(campaign_id: int, row: tuple) -> tuple[dict[str, Any], str]:
    """A raw row as the event document (payload still as its stored text) and its hash."""
    seq, type_, payload, actor, created, visibility, *context, prev_hash, hash_ = row
    session, scene, chapter, character = (_uuid(value) for value in context)
    fields = {
        "campaign": campaign_id,
        "seq": seq,
        "type": type_,
        "payload": payload,
        "actor": actor,
        "created_at": _iso(created),
        "visibility": visibility,
        "session": session,
        "scene": scene,
        "chapter": chapter,
        "character": character,
        "prev_hash": prev_hash,
    }
    return fields, hash_


def chain_intact(campaign_id: int, *, until: int, head_hash: str) -> bool:
    """The chain alone, fast: seqs 1..until without gaps, every link, every hash, ending at
    ``head_hash``. Each event is hashed from its stored canonical payload text as is (one
    SHA-256 over a string assembled around it, no JSON decoding; `_fast_hash`); a text that is
    not canonical (a row appended without `payload_text`) is decoded and re-encoded. Says only
    whether the chain holds: the full pass names what does not."""
    expected, prev = 1, GENESIS
    for row in raw_chain_rows(campaign_id, until):
        fields, hash_ = _fields(campaign_id, row)
        if fields["seq"] != expected or fields["prev_hash"] != prev:
            return False
        if _fast_hash(fields) != hash_:
            fields["payload"] = json.loads(fields["payload"])
            if document_hash(fields) != hash_:
                return False
        expected, prev = fields["seq"] + 1, hash_
    return expected - 1 == until and prev == head_hash


def _copies_agree(campaign_id: int, *, until: int) -> bool:
    """PostgreSQL: is every event's jsonb payload (what the application reads, and the full
    proof hashes) the canonical text the fast chain hashes? Each row is checked on insert (a CHECK
    constraint); this finds a row edited in place since, by someone with the owner's rights.
    Costs a JSON parse per row in the database: `verify_log --rehash` only."""
    if connection.vendor != "postgresql":
        return True  # SQLite keeps one copy
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
    """The events for the full proof, payload decoded, each with whether its hash was already
    checked here from the stored text (SQLite, where that text is canonical: `_fast_hash`)."""
    fast = connection.vendor == "sqlite"
    rows = raw_chain_rows(
        campaign_id, _FOREVER if until is None else until, after=after, hashed_text=False
    )
    for row in rows:
        fields, hash_ = _fields(campaign_id, row)
        checked = fast and _fast_hash(fields) == hash_
        fields["payload"] = json.loads(fields["payload"])
        fields["hash"] = hash_
        yield fields, checked


def _fast_hash(fields: dict[str, Any]) -> str:
    """eventlog.chain.document_hash of an event whose payload is the stored canonical text, by
    string assembly (keys in sorted order, the text as is); a sealed event's digest is taken over
    the text the same way. Equal to document_hash when the text is canonical."""
    actor, text, character = fields["actor"], _quoted, fields["character"]
    payload, visibility = fields["payload"], fields["visibility"]
    if visibility != "public":  # eventlog.chain.sealed_payload, on the text
        inner = f'{{"character":{text(character)},"payload":{payload}}}'
        digest = hashlib.sha256(inner.encode()).hexdigest()
        try:
            parsed = json.loads(payload)
        except ValueError:
            return ""  # not JSON: the caller's full decoding says what is wrong
        public = {key: parsed[key] for key in SEALED_PUBLIC_KEYS if key in parsed}
        payload, character = canonical_json({**public, "sealed": digest}), None
    document = (
        f'{{"actor":{"null" if actor is None else int(actor)},"campaign":{fields["campaign"]},'
        f'"chapter":{text(fields["chapter"])},"character":{text(character)},'
        f'"created_at":"{fields["created_at"]}","payload":{payload},'
        f'"prev_hash":"{fields["prev_hash"]}","scene":{text(fields["scene"])},'
        f'"seq":{fields["seq"]},"session":{text(fields["session"])},'
        f'"type":{json.dumps(fields["type"], ensure_ascii=False)},'
        f'"visibility":{json.dumps(visibility, ensure_ascii=False)}}}'
    )
    return hashlib.sha256(document.encode()).hexdigest()


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
    at_checkpoint = Event.objects.filter(campaign_id=campaign.pk, seq=OuterRef("seq"))
    return (
        VerificationCheckpoint.objects.filter(campaign=campaign)
        .annotate(stored_hash=Subquery(at_checkpoint.values("hash")[:1]))
        .first()
    )


def _store(campaign: Campaign, state: dict[str, Any]) -> None:
    """Keep the verifier's state as the campaign's checkpoint. It is a cache of a computation
    anyone can repeat (the log is the evidence, not this row): its commit need not wait for the
    disk on PostgreSQL, and losing it in a crash only means proving those events again."""
    seq, hash_ = state["last"]
    values = {"seq": seq, "hash": hash_, "ok": not state["problems"], "state": state}
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO off")
        stored = VerificationCheckpoint.objects.filter(campaign=campaign)
        if not stored.update(**values, verified_at=timezone.now()):
            VerificationCheckpoint.objects.create(campaign=campaign, **values)


def verify_campaign(
    campaign: Campaign,
    *,
    rehash: bool = False,
    fresh: bool = False,
    progress: Progress | None = None,
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
        rows = _proof_rows(campaign.pk, after=after, until=campaign.head_seq)
        for row, hash_checked in _counted(rows, progress) if progress else rows:
            verifier.feed(row, hash_checked=hash_checked)
    state = verifier.snapshot()
    if state["last"][0] and (after == 0 or state["last"][0] != checkpoint.seq):
        _store(campaign, state)  # nothing new since the checkpoint: nothing to write
    return verifier.finish(head_seq=campaign.head_seq, head_hash=campaign.head_hash)


def verify_campaigns(
    *,
    campaign_ids: list[int] | None = None,
    progress_stream: TextIO | None = None,
    rehash: bool = False,
    fresh: bool = False,
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
        result = verify_campaign(campaign, rehash=rehash, fresh=fresh, progress=progress)
        report.campaigns.append(result)
        report.events += result.events
        report.problems += result.problems
        status = "ok  " if result.ok else "FAIL"
        report.lines.append(
            f"{status} campaign {campaign.pk} ({campaign.name}): {result.events:,} events, "
            f"{result.sessions_proven} closed session(s) proven"
        )
        report.lines += result.detail_lines(indent="     ")
    if progress:
        progress.close()
    return report


def _counted(rows: Iterator[Any], progress: Progress) -> Iterator[Any]:
    for row in rows:
        yield row
        progress.advance()
