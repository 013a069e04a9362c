"""After the session: the luck report and the chronicle as pages (charts drawn as SVG here)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import number_format
from django.utils.translation import gettext as _

from campaign.models import Campaign, Role, Session
from pages.views import member_of_campaign
from rolls import luck
from rolls.reads.chronicle import session_chronicle
from rolls.reads.luck import luck_report
from rolls.words import OUTCOMES

# A summary whose two-sided p-value is below this is called luckier/unluckier than chance.
SURPRISING = 0.05
STRIP_WIDTH = 400
BAR_AREA = 110


def _session(campaign: Campaign, number: int) -> Session:
    session = Session.objects.filter(campaign=campaign, number=number).first()
    if session is None:
        raise Http404
    return session


def _p_text(p: float | None) -> str:
    """The p-value with its relation, in the reader's numbers («= 0,547», «< 0,001»)."""
    if p is None:
        return "—"
    if p < 0.001:
        return f"< {number_format(0.001, 3)}"
    return f"= {number_format(p, 3)}"


def _verdict(summary: dict[str, Any]) -> str:
    p, mean = summary.get("p_value"), summary.get("mean_percentile")
    if p is None or mean is None or p >= SURPRISING:
        return "ordinary"
    return "lucky" if mean > 50 else "unlucky"


def _summaries(report: dict[str, Any], system: str) -> dict[str, Any]:
    names = OUTCOMES.get(system, {})
    players = []
    for player in report["players"]:
        mean = player["mean_percentile"]
        players.append(
            {
                **player,
                "p_text": _p_text(player["p_value"]),
                "verdict": _verdict(player),
                "strip": [round(p * STRIP_WIDTH / 100, 1) for p in player["percentiles"]],
                "mean_x": None if mean is None else round(mean * STRIP_WIDTH / 100, 1),
            }
        )
    characters = [
        {
            **character,
            "p_text": _p_text(character["p_value"]),
            "verdict": _verdict(character),
            "outcome_rows": [
                {"name": str(names.get(outcome, outcome)), **counts}
                for outcome, counts in character["outcomes"].items()
            ],
        }
        for character in report["characters"]
    ]
    dice = []
    for die in report["dice"]:
        width = max(240, 34 * die["sides"])
        step = width / die["sides"]
        top = max(max(die["counts"]), die["expected"], 1)
        bars = []
        for face, count in enumerate(die["counts"], start=1):
            height = round(count / top * BAR_AREA, 1)
            x = round((face - 1) * step + step * 0.15, 1)
            bars.append(
                {
                    "face": face,
                    "count": count,
                    "x": x,
                    "w": round(step * 0.7, 1),
                    "h": height,
                    "y": round(BAR_AREA - height + 2, 1),
                    "tx": round(x + step * 0.35 - 4, 1),
                }
            )
        dice.append(
            {
                **die,
                "width": width,
                "bars": bars,
                "expected_y": round(BAR_AREA - die["expected"] / top * BAR_AREA + 2, 1),
                "p_text": _p_text(die["p_value"]),
                "suspicious": die["p_value"] < 0.001,
            }
        )
    each_roll = [
        {**roll, "outcome_name": str(names.get(roll["outcome"], roll["outcome"]))}
        for roll in report.get("each_roll") or ()
    ]
    return {"players": players, "characters": characters, "dice": dice, "each_roll": each_roll}


def _proof_line(verification: dict[str, Any]) -> str:
    if verification["covers"]:
        return _(
            "These faces are the ones committed to before each roll: the log is verified "
            "through #%(seq)s."
        ) % {"seq": verification["verified_through"]}
    if verification["verified_through"] and not verification["ok"]:
        return _("The verification of this log FAILED: see the audit page.")
    return _("Not verified up to these rolls yet: the audit page verifies the log.")


@login_required
def luck_page(request: HttpRequest, campaign_id: int, number: int | None = None) -> HttpResponse:
    campaign, membership = member_of_campaign(request, campaign_id)
    session = None if number is None else _session(campaign, number)
    report = luck_report(campaign=campaign, membership=membership, session=session)
    json_url = (
        reverse("api-luck-report", args=[campaign.pk])
        if session is None
        else reverse("api-session-luck-report", args=[campaign.pk, session.number])
    )
    return render(
        request,
        "reports/luck.html",
        {
            "campaign": campaign,
            "is_gm": membership.role == Role.GM,
            "page_name": "report",
            "session": session,
            "sessions": Session.objects.filter(campaign=campaign).order_by("number"),
            "report": report,
            "json_url": json_url,
            "proof": _proof_line(report["verification"]),
            "exact_limit": luck.EXACT_LIMIT,
            **_summaries(report, campaign.system),
        },
    )


@login_required
def chronicle_page(request: HttpRequest, campaign_id: int, number: int) -> HttpResponse:
    campaign, membership = member_of_campaign(request, campaign_id)
    session = _session(campaign, number)
    chronicle = session_chronicle(campaign=campaign, membership=membership, session=session)
    api = reverse("api-chronicle", args=[campaign.pk, session.number])
    return render(
        request,
        "reports/chronicle.html",
        {
            "campaign": campaign,
            "is_gm": membership.role == Role.GM,
            "page_name": "report",
            "session": session,
            "chronicle": chronicle,
            "time_zone": timezone.get_current_timezone_name(),
            "markdown_url": f"{api}?as=md",
            "html_url": f"{api}?as=html",
        },
    )
