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

from django.db import connection
from django.db.models import Q, QuerySet

from campaign.models import Campaign
from eventlog.chain import GENESIS, document_hash, event_document, timestamp
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
    """A campaign's events as the plain dicts `rolls.trust.verify` checks (and exports carry)."""
    events = Event.objects.filter(campaign_id=campaign_id, seq__gt=after)
    if until is not None:
        events = events.filter(seq__lte=until)
    return _as_rows(campaign_id, events)


def _as_rows(campaign_id: int, events: QuerySet[Event]) -> Iterator[dict[str, Any]]:
    rows = events.order_by("seq").values_list(*_COLUMNS).iterator(5000)
    for row in rows:
        yield event_document(campaign_id, *row)


_RAW_CHAIN_SQL = (
    "SELECT seq, type, {payload}, actor_id, created_at, visibility, session_id, scene_id, "
    "chapter_id, character_id, prev_hash, hash FROM campaign_event "
    "WHERE campaign_id = %s AND seq <= %s ORDER BY seq"
)


def raw_chain_rows(campaign_id: int, until: int) -> Iterator[tuple]:
    """The columns the chain covers, straight from the database: no ORM objects, and the
    payload as the stored text (canonical JSON on SQLite, see eventlog.chain.CanonicalEncoder)."""
    payload = "payload" if connection.vendor == "sqlite" else "payload::text"
    with connection.cursor() as cursor:
        cursor.execute(_RAW_CHAIN_SQL.format(payload=payload), [campaign_id, until])
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


def chain_intact(campaign_id: int, *, until: int, head_hash: str) -> bool:
    """The chain alone, fast: seqs 1..until without gaps, every link, every hash, ending at
    ``head_hash``. A public event is hashed from its stored payload text as is (one SHA-256 over
    a string, no JSON decoding); anything else, or a mismatch, is re-encoded the usual way. Says
    only whether the chain holds: the full pass names what does not."""
    expected, prev = 1, GENESIS
    for row in raw_chain_rows(campaign_id, until):
        seq, type_, payload, actor, created, visibility, *context, prev_hash, hash_ = row
        session, scene, chapter, character = (_uuid(value) for value in context)
        if seq != expected or prev_hash != prev:
            return False
        fields = {
            "campaign": campaign_id,
            "seq": seq,
            "type": type_,
            "payload": payload,  # the stored text, for now
            "actor": actor,
            "created_at": _iso(created),
            "visibility": visibility,
            "session": session,
            "scene": scene,
            "chapter": chapter,
            "character": character,
            "prev_hash": prev_hash,
        }
        if visibility != "public" or _fast_hash(fields) != hash_:
            fields["payload"] = json.loads(payload)
            if document_hash(fields) != hash_:
                return False
        expected, prev = seq + 1, hash_
    return expected - 1 == until and prev == head_hash


def _fast_hash(fields: dict[str, Any]) -> str:
    """eventlog.chain.hashed_document of a public event, as canonical JSON, by string assembly
    (keys in sorted order, the payload's stored text as is); equal to document_hash when that text
    is canonical."""
    actor, text = fields["actor"], _quoted
    document = (
        f'{{"actor":{"null" if actor is None else int(actor)},"campaign":{fields["campaign"]},'
        f'"chapter":{text(fields["chapter"])},"character":{text(fields["character"])},'
        f'"created_at":"{fields["created_at"]}","payload":{fields["payload"]},'
        f'"prev_hash":"{fields["prev_hash"]}","scene":{text(fields["scene"])},'
        f'"seq":{fields["seq"]},"session":{text(fields["session"])},'
        f'"type":{json.dumps(fields["type"], ensure_ascii=False)},"visibility":"public"}}'
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
    stored = Event.objects.filter(campaign=campaign, seq=checkpoint.seq).values_list("hash")
    stored_hash = stored.first()
    when = checkpoint.verified_at.isoformat(timespec="seconds")
    if stored_hash is None:
        return (
            f"event #{checkpoint.seq}, verified on {when}, is gone: the log was cut back "
            "(an older backup restored?)"
        )
    if stored_hash[0] != checkpoint.hash:
        return (
            f"event #{checkpoint.seq} no longer has the hash verified on {when}: "
            "history was rewritten since"
        )
    return None


def verify_campaign(
    campaign: Campaign,
    *,
    chain_first: bool = True,
    fresh: bool = False,
    progress: Progress | None = None,
) -> StreamReport:
    """Carry the campaign's stored verification on from its checkpoint to the head.

    The whole log is proven the first time, with ``fresh``, or when the events below the
    checkpoint changed; otherwise only the events after it (a page view after one more roll reads
    one event). ``chain_first`` re-hashes the events below the checkpoint first, which catches a
    row edited in place without the full proof's cost. A checkpoint whose event no longer has its
    hash is reported as a problem: the log changed under a verification already made.
    """
    checkpoint = None
    if not fresh:
        checkpoint = VerificationCheckpoint.objects.filter(campaign=campaign).first()
    changed = _checkpoint_holds(campaign, checkpoint) if checkpoint else None
    if checkpoint and not changed and chain_first:
        intact = chain_intact(campaign.pk, until=checkpoint.seq, head_hash=checkpoint.hash)
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
    rows = event_rows(campaign.pk, after=after, until=campaign.head_seq)
    for row in _counted(rows, progress) if progress else rows:
        verifier.feed(row)
    state = verifier.snapshot()
    seq, hash_ = state["last"]
    if seq:
        VerificationCheckpoint.objects.update_or_create(
            campaign=campaign,
            defaults={
                "seq": seq,
                "hash": hash_,
                "ok": not state["problems"],
                "state": state,
            },
        )
    return verifier.finish(head_seq=campaign.head_seq, head_hash=campaign.head_hash)


def verify_campaigns(
    *,
    campaign_ids: list[int] | None = None,
    progress_stream: TextIO | None = None,
    chain_first: bool = True,
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
        result = verify_campaign(campaign, chain_first=chain_first, fresh=fresh, progress=progress)
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


def _counted(rows: Iterator[dict[str, Any]], progress: Progress) -> Iterator[dict[str, Any]]:
    for row in rows:
        yield row
        progress.advance()
