"""Verification of the stored logs: the server side of `rolls.trust.verify`, with the same checks.

The verifier is handed the seeds the server keeps (`SessionSecret`), so each roll is proven as it
streams by (nothing is buffered until the reveal) and open sessions are proven too, without
revealing anything: the report never prints a seed, nor faces derived from an unrevealed one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from campaign.models import Campaign, Event, SessionSecret
from eventlog.chain import event_document
from eventlog.progress import Progress
from rolls.trust.verify import Problem, StreamReport, StreamVerifier

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
        """Per session, for pages: is it proven (``private``: only with the server's unrevealed
        seed, while it is open), the first problem within it or else its summary, its receipt."""
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
                        "private": session.private,
                        "ok": bool(session.seed_ok)
                        and session.proven == session.server_rolls
                        and not inside,
                        "what": str(inside[0]) if inside else session.describe(),
                        "server_rolls": session.server_rolls,
                        "proven": session.proven,
                        "manual_rolls": session.manual_rolls,
                        "final_seq": session.final_seq,
                        "final_hash": session.final_hash,
                    }
                )
        return rows


def event_rows(campaign_id: int, *, until: int | None = None) -> Iterator[dict[str, Any]]:
    """A campaign's events as the plain dicts `rolls.trust.verify` checks (and exports carry)."""
    events = Event.objects.filter(campaign_id=campaign_id)
    if until is not None:
        events = events.filter(seq__lte=until)
    rows = events.order_by("seq").values_list(*_COLUMNS).iterator(5000)
    for row in rows:
        yield event_document(campaign_id, *row)


def stored_seed(session_id: str) -> bytes | None:
    seed = (
        SessionSecret.objects.filter(session_id=session_id).values_list("seed", flat=True).first()
    )
    return None if seed is None else bytes(seed)


def verify_campaign(
    campaign: Campaign, rows: Iterator[dict[str, Any]] | None = None
) -> StreamReport:
    verifier = StreamVerifier(campaign.pk, system=campaign.system, seed_for=stored_seed)
    for row in event_rows(campaign.pk) if rows is None else rows:
        verifier.feed(row)
    return verifier.finish(head_seq=campaign.head_seq, head_hash=campaign.head_hash)


def verify_campaigns(
    *, campaign_ids: list[int] | None = None, progress_stream: TextIO | None = None
) -> Report:
    campaigns = Campaign.objects.order_by("pk")
    if campaign_ids:
        campaigns = campaigns.filter(pk__in=campaign_ids)
    report = Report()
    total = Event.objects.filter(campaign__in=campaigns).count()
    progress = Progress(total, "verify", stream=progress_stream) if progress_stream else None
    for campaign in campaigns:
        rows = event_rows(campaign.pk)
        if progress:
            rows = _counted(rows, progress)
        result = verify_campaign(campaign, rows)
        report.campaigns.append(result)
        report.events += result.events
        report.problems += result.problems
        status = "ok  " if result.ok else "FAIL"
        report.lines.append(
            f"{status} campaign {campaign.pk} ({campaign.name}): {result.events:,} events, "
            f"{result.sessions_proven} closed session(s) proven from the seed"
        )
        report.lines += result.detail_lines(indent="     ")
    if progress:
        progress.close()
    return report


def _counted(rows: Iterator[dict[str, Any]], progress: Progress) -> Iterator[dict[str, Any]]:
    for row in rows:
        yield row
        progress.advance()
