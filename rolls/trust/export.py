"""A campaign's log as a document anyone can verify, and its checks as CSV for the audit page.

`export_campaign` returns what `python -m rolls.trust.verify` reads (see docs/verification.md):

    {"format": "tablecheck-log/2", "exported_at": "…",
     "campaign": {"id", "name", "system", "head_seq", "head_hash"},
     "events": [{"campaign", "seq", "type", "payload", "actor", "created_at", "visibility",
                 "session", "scene", "chapter", "character", "prev_hash", "hash"}, …]}
"""

from __future__ import annotations

import csv
import io
from typing import Any

from django.contrib.auth import get_user_model
from django.utils import timezone

from campaign.models import Campaign, Membership, Session
from eventlog.chain import hashed_document, timestamp
from rolls.models import Check
from rolls.reads.present import hidden_seqs
from rolls.reads.visibility import may_see
from rolls.trust.stored_log import event_rows

FORMAT = "tablecheck-log/2"  # 2: sealed hidden events, per-roll keys
CSV_COLUMNS = (
    "seq",
    "time",
    "session",
    "character",
    "actor",
    "system",
    "visibility",
    "dice",
    "outcome",
    "faces",
    "summary",
)


def export_campaign(campaign: Campaign, *, membership: Membership | None = None) -> dict[str, Any]:
    """The campaign's whole log, up to its head when the export starts.

    For a ``membership`` other than a GM's, the events that member may not see (blind rolls,
    others' private rolls, until revealed) are their sealed hashed documents: the chain still
    verifies, their contents stay hidden. Session seeds are in no event, so never here; a roll's
    key is in its own event, so only where that event is shown.
    """
    campaign = Campaign.objects.get(pk=campaign.pk)  # the head now; later appends are left out
    hidden = hidden_seqs(campaign.pk, membership, until=campaign.head_seq) if membership else set()
    events = [
        _redacted(row) if row["seq"] in hidden else row
        for row in event_rows(campaign.pk, until=campaign.head_seq)
    ]
    return {
        "format": FORMAT,
        "exported_at": timestamp(timezone.now()),
        "campaign": {
            "id": campaign.pk,
            "name": campaign.name,
            "system": campaign.system,
            "head_seq": campaign.head_seq,
            "head_hash": campaign.head_hash,
        },
        "events": events,
    }


def _redacted(row: dict[str, Any]) -> dict[str, Any]:
    """The sealed hashed document (eventlog.chain): its hash verifies, its salt and content stay
    with the server."""
    return {**hashed_document(row), "hash": row["hash"], "redacted": True}


def checks_csv(campaign: Campaign, *, membership: Membership | None = None) -> str:
    """One row per check (follow-ups applied), for spreadsheets; rows a member may not see are
    left out."""
    checks = [
        check
        for check in Check.objects.filter(campaign=campaign).order_by("seq")
        if membership is None or may_see(check, membership)
    ]
    sessions = dict(Session.objects.filter(campaign=campaign).values_list("id", "number"))
    User = get_user_model()
    names = dict(
        User.objects.filter(pk__in={c.actor_id for c in checks}).values_list(
            "pk", User.USERNAME_FIELD
        )
    )
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for check in checks:
        rolls = check.data.get("rolls", [])
        writer.writerow(
            [
                check.seq,
                timestamp(check.created_at),
                sessions.get(check.session_id, ""),
                _cell(" vs ".join(roll.get("character_name") or "(none)" for roll in rolls)),
                _cell(names.get(check.actor_id, "")),
                check.system,
                check.visibility + (" (revealed)" if check.revealed else ""),
                "manual" if check.manual else "server",
                check.outcome,
                " | ".join(" ".join(map(str, roll.get("faces", []))) for roll in rolls),
                _cell(_summary(check)),
            ]
        )
    return buffer.getvalue()


def _summary(check: Check) -> str:
    data = check.data
    parts = [data["label"]] if data.get("label") else []
    for roll in data.get("rolls", []):
        name = roll.get("character_name") or "GM"
        parts.append(f"{name}: {_result_text(roll.get('result') or {})}")
    comparison = data.get("comparison")
    if comparison:
        verdict = comparison.get("outcome") or comparison.get("winner") or "tie"
        parts.append(f"{data.get('kind')}: {verdict}")
    for followup in data.get("followups", []):
        parts.append(f"then {followup['type'].removeprefix('check.')} (#{followup['seq']})")
    return "; ".join(parts)


def _result_text(result: dict[str, Any]) -> str:
    text = str(result.get("outcome", "?"))
    if "successes" in result:
        text += f" (successes: {result['successes']})"
    elif "total" in result:
        text += f" (total: {result['total']})"
    return text


def _cell(text: str) -> str:
    """Player-typed text must not run as a spreadsheet formula (CSV injection)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
