"""Verification of the stored logs (the server side of `rolls.verify`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from campaign.models import Campaign, Event
from campaign.progress import Progress
from rolls.chain import timestamp
from rolls.verify import Problem, verify_chain

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


def event_rows(campaign_id: int) -> Iterator[dict[str, Any]]:
    """A campaign's events as the plain dicts `rolls.verify` checks (and exports carry)."""
    rows = (
        Event.objects.filter(campaign_id=campaign_id)
        .order_by("seq")
        .values_list(*_COLUMNS)
        .iterator(5000)
    )
    for (
        seq,
        type_,
        payload,
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
        yield {
            "campaign": campaign_id,
            "seq": seq,
            "type": type_,
            "payload": payload,
            "actor": actor,
            "created_at": timestamp(created),
            "visibility": visibility,
            "session": None if session is None else str(session),
            "scene": None if scene is None else str(scene),
            "chapter": None if chapter is None else str(chapter),
            "character": None if character is None else str(character),
            "prev_hash": prev,
            "hash": hash_,
        }


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
        count, problem = verify_chain(
            campaign.pk, rows, head_seq=campaign.head_seq, head_hash=campaign.head_hash
        )
        report.events += count
        if problem:
            report.problems.append(problem)
            report.lines.append(f"FAIL {problem}")
        else:
            report.lines.append(f"ok   campaign {campaign.pk} ({campaign.name}): {count:,} events")
    if progress:
        progress.close()
    return report


def _counted(rows: Iterator[dict[str, Any]], progress: Progress) -> Iterator[dict[str, Any]]:
    for row in rows:
        yield row
        progress.advance()
