"""The web pages: server-rendered shells whose JavaScript talks to the REST API.

Views stay thin: they check membership, call the services for the few writes made by plain
forms (create a campaign, sign up, join by invite) and hand the pages their first state through
the same presenters the REST API uses, so a page's first paint and its later updates agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib.auth import get_user_model, login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_http_methods

from campaign import services
from campaign.access import membership_of
from campaign.api.serializers import MemberSerializer
from campaign.api.views import campaign_data, character_data
from campaign.errors import DomainError
from campaign.models import Campaign, Chapter, Character, Membership, Role, Session
from campaign.sheets import sheet_template
from eventlog.event_types import (
    CHAPTER_ENDED,
    CHAPTER_STARTED,
    CHARACTER_CHANGED,
    CHECK_CALLED,
    MEMBER_JOINED,
    SCENE_ENDED,
    SCENE_STARTED,
    SESSION_ENDED,
    SESSION_STARTED,
)
from pages.once import once
from pages.templatetags.tablecheck import OUTCOMES, SYSTEM_NAMES, option_rows, ui_strings
from rolls.checks import eligibility
from rolls.models import Check
from rolls.reads.allowances import allowances_for
from rolls.reads.present import feed_window, present_check, present_checks
from rolls.reads.selectors import events_for
from rolls.reads.visibility import may_see
from rolls.systems import SYSTEM_IDS
from rolls.trust.stored_log import problems_told_to, verify_campaigns

AUDIT_PAGE = 50
# Events the feed shows as a line between the rolls.
MARKER_TYPES = [
    SESSION_STARTED,
    SESSION_ENDED,
    CHAPTER_STARTED,
    CHAPTER_ENDED,
    SCENE_STARTED,
    SCENE_ENDED,
    CHECK_CALLED,
    MEMBER_JOINED,
]
# The GM's feed also shows sheet edits (a player raising a trait mid-session is the GM's business).
GM_MARKER_TYPES = [*MARKER_TYPES, CHARACTER_CHANGED]


# --- account pages -------------------------------------------------------------------------


class SignUpForm(UserCreationForm):
    """A username and a password, twice; nothing else is needed to play."""


def _next_url(request: HttpRequest, default: str) -> str:
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return default


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    next_url = _next_url(request, reverse("home"))
    if request.user.is_authenticated:
        return redirect(next_url)
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect(next_url)
    return render(request, "registration/signup.html", {"form": form, "next": next_url})


# --- campaigns -----------------------------------------------------------------------------


class CampaignForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100)
    system = forms.ChoiceField(
        label=_("Game system"),
        choices=[(system, SYSTEM_NAMES[system]) for system in SYSTEM_IDS],
        widget=forms.RadioSelect,
    )


@login_required
@require_http_methods(["GET", "POST"])
def home(request: HttpRequest) -> HttpResponse:
    """My campaigns, and a new one."""
    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        # A double submit creates one campaign (pages/once.py).
        return once(request, lambda: _create_campaign(request, form))
    return _home_page(request, form)


def _create_campaign(request: HttpRequest, form: CampaignForm) -> HttpResponse:
    try:
        campaign = services.create_campaign(
            name=form.cleaned_data["name"],
            system=form.cleaned_data["system"],
            created_by=request.user,
        )
    except DomainError as error:
        form.add_error(None, error.message)
        return _home_page(request, form)
    return redirect("gm", campaign_id=campaign.pk)


def _home_page(request: HttpRequest, form: CampaignForm) -> HttpResponse:
    memberships = (
        Membership.objects.filter(user=request.user)
        .select_related("campaign")
        .order_by("campaign__name")
    )
    open_sessions = dict(
        Session.objects.filter(
            campaign_id__in=[m.campaign_id for m in memberships], ended_seq__isnull=True
        ).values_list("campaign_id", "number")
    )
    rows = [
        {"membership": m, "campaign": m.campaign, "session": open_sessions.get(m.campaign_id)}
        for m in memberships
    ]
    return render(request, "campaign/home.html", {"rows": rows, "form": form})


@require_http_methods(["GET", "POST"])
def join(request: HttpRequest, code: str) -> HttpResponse:
    """The invite link: sign in or sign up, confirm, and land on the player page."""
    campaign = Campaign.objects.filter(invite_code=code).first()
    if not request.user.is_authenticated:
        if campaign is None:
            raise Http404
        return render(request, "campaign/join.html", {"campaign": campaign, "code": code})
    if campaign is None:
        raise Http404
    if membership_of(campaign, request.user) is not None:
        return redirect("campaign", campaign_id=campaign.pk)
    if request.method == "POST":

        def join_it() -> HttpResponse:
            services.join_campaign(invite_code=code, user=request.user)
            return redirect("play", campaign_id=campaign.pk)

        return once(request, join_it, campaign_id=campaign.pk)
    return render(request, "campaign/join.html", {"campaign": campaign, "code": code})


def member_of_campaign(request: HttpRequest, campaign_id: int) -> tuple[Campaign, Membership]:
    """The campaign and my membership; 404 for non-members, as in the API."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    membership = membership_of(campaign, request.user) if campaign else None
    if campaign is None or membership is None:
        raise Http404
    return campaign, membership


@login_required
def campaign_entry(request: HttpRequest, campaign_id: int) -> HttpResponse:
    _, membership = member_of_campaign(request, campaign_id)
    return redirect("gm" if membership.role == Role.GM else "play", campaign_id=campaign_id)


def _table(request: HttpRequest, campaign: Campaign, membership: Membership) -> dict[str, Any]:
    """The first state of a table page (the same shapes the REST API and the feed send)."""
    data = campaign_data(campaign, membership)  # head_seq first: the feed resumes after it
    head = data["head_seq"]
    # The markers since the open session began, or the last one (a page that stayed open
    # through its end shows them; rolls before the window hold theirs back to "Show older").
    open_session = Session.open_in(campaign)
    session = open_session or Session.objects.filter(campaign=campaign).last()
    recent, more_checks = feed_window(campaign, head, open_session)
    since = session.started_seq - 1 if session else (recent[0].seq - 1 if recent else head)
    members = Membership.objects.filter(campaign=campaign).select_related("user")
    return {
        "campaign": data,
        "me": {
            "id": request.user.pk,
            "username": request.user.get_username(),
            "role": membership.role,
        },
        "characters": character_data(list(Character.objects.filter(campaign=campaign)), membership),
        "members": MemberSerializer(members.order_by("joined_seq"), many=True).data,
        "state": allowances_for(campaign, membership, head=head),
        "checks": present_checks(recent, membership),
        "more_checks": more_checks,
        "markers": events_for(
            membership=membership,
            after=since,
            until=head,
            types=GM_MARKER_TYPES if membership.role == Role.GM else MARKER_TYPES,
            limit=500,
        ),
        "api": f"/api/campaigns/{campaign.pk}/",
        "ws": f"/ws/campaigns/{campaign.pk}/",
    }


def _page(
    request: HttpRequest, template: str, campaign: Campaign, membership: Membership, **extra: Any
) -> HttpResponse:
    context = {
        "page_name": template.rsplit("/", 1)[-1].removesuffix(".html"),
        "campaign": campaign,
        "membership": membership,
        "is_gm": membership.role == Role.GM,
        "table": _table(request, campaign, membership),
        "strings": ui_strings(),
        "sheet_template": sheet_template(campaign.system),
        **extra,
    }
    return render(request, template, context)


@login_required
@ensure_csrf_cookie
def gm_dashboard(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign, membership = member_of_campaign(request, campaign_id)
    if membership.role != Role.GM:
        raise PermissionDenied(_("Only the game master opens the dashboard."))
    invite = request.build_absolute_uri(reverse("join", args=[campaign.invite_code]))
    return _page(
        request,
        "campaign/gm.html",
        campaign,
        membership,
        options=option_rows(campaign.system, campaign.options),
        invite_url=invite,
    )


@login_required
@ensure_csrf_cookie
def play(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign, membership = member_of_campaign(request, campaign_id)
    return _page(request, "campaign/play.html", campaign, membership)


# --- audit ---------------------------------------------------------------------------------


class AuditFilter(forms.Form):
    campaign = forms.TypedChoiceField(label=_("Campaign"), coerce=int, required=False)
    session = forms.ChoiceField(label=_("Session"), required=False)
    chapter = forms.ChoiceField(label=_("Chapter"), required=False)
    character = forms.ChoiceField(label=_("Character"), required=False)
    system = forms.ChoiceField(label=_("Game system"), required=False)
    outcome = forms.ChoiceField(label=_("Outcome"), required=False)

    def __init__(self, data: Any, memberships: list[Membership], campaign: Campaign | None):
        super().__init__(data)
        everything = [("", _("all"))]
        self.fields["campaign"].choices = everything + [
            (m.campaign_id, m.campaign.name) for m in memberships
        ]
        systems = sorted({m.campaign.system for m in memberships})
        self.fields["system"].choices = everything + [(s, SYSTEM_NAMES[s]) for s in systems]
        outcomes: dict[str, str] = {}
        for system in [campaign.system] if campaign else systems:
            for key, label in OUTCOMES[system].items():
                outcomes.setdefault(key, str(label))
        self.fields["outcome"].choices = everything + sorted(outcomes.items())
        sessions: list[tuple[str, str]] = []
        chapters: list[tuple[str, str]] = []
        characters: list[tuple[str, str]] = []
        if campaign is not None:
            sessions = [
                (str(s.pk), f"{_('Session')} {s.number} {s.title}".strip())
                for s in Session.objects.filter(campaign=campaign).order_by("number")
            ]
            chapters = [
                (str(c.pk), f"{_('Chapter')} {c.number} {c.title}".strip())
                for c in Chapter.objects.filter(campaign=campaign).order_by("number")
            ]
            characters = [(str(c.pk), c.name) for c in Character.objects.filter(campaign=campaign)]
        self.fields["session"].choices = everything + sessions
        self.fields["chapter"].choices = everything + chapters
        self.fields["character"].choices = everything + characters


@dataclass
class Verification:
    campaign: Campaign
    ok: bool
    events: int
    details: list[str]
    sessions: list[dict[str, Any]]


def _verification(campaigns: list[Campaign], viewers: dict[int, Membership]) -> list[Verification]:
    """The log check per campaign (chain, results, seeds) and what it says of each session, as
    each campaign's ``viewers`` member may be told it (`problems_told_to`)."""
    if not campaigns:
        return []
    # The stored verification, carried on from its checkpoint: a view reads the new events only.
    # A GET that writes: the checkpoint is a cache of a computation anyone can repeat (the log is
    # the evidence), written only when new events were proven; docs/verification.md.
    report = verify_campaigns(campaign_ids=[c.pk for c in campaigns])
    streams = {stream.campaign: stream for stream in report.campaigns}
    per_session = {(row["campaign"], str(row["session"])): row for row in report.sessions}
    results = []
    for campaign in campaigns:
        stream = streams.get(campaign.pk)
        sessions = [
            {
                "session": session,
                "closed": not session.is_open,
                "detail": _told(per_session.get((campaign.pk, str(session.pk))), viewers),
            }
            for session in Session.objects.filter(campaign=campaign).order_by("number")
        ]
        results.append(
            Verification(
                campaign=campaign,
                ok=bool(stream and stream.ok),
                events=stream.events if stream else 0,
                details=problems_told_to(stream.problems, viewers[campaign.pk]) if stream else [],
                sessions=sessions,
            )
        )
    return results


def _told(detail: dict[str, Any] | None, viewers: dict[int, Membership]) -> dict[str, Any] | None:
    """A session's verification row with its first problem as the campaign's viewer may be told
    it, as the list of problems tells it (a hidden roll's content is not named)."""
    if detail is None or detail["problem"] is None:
        return detail
    (told,) = problems_told_to([detail["problem"]], viewers[detail["campaign"]])
    return {**detail, "what": told}


@login_required
def audit(request: HttpRequest, campaign_id: int | None = None) -> HttpResponse:
    """The whole history I may see, filtered; the chain's verification; the exports."""
    memberships = list(
        Membership.objects.filter(user=request.user)
        .select_related("campaign")
        .order_by("campaign__name")
    )
    by_campaign = {m.campaign_id: m for m in memberships}
    if campaign_id is not None:
        member_of_campaign(request, campaign_id)
    query = request.GET.copy()
    if campaign_id is not None:
        query["campaign"] = str(campaign_id)
    chosen_id = _int_or_none(query.get("campaign"))
    if chosen_id is not None and chosen_id not in by_campaign:
        raise Http404
    chosen = by_campaign[chosen_id].campaign if chosen_id is not None else None
    form = AuditFilter(query, memberships, chosen)
    filters = form.cleaned_data if form.is_valid() else {}

    checks = Check.objects.filter(campaign_id__in=list(by_campaign))
    if chosen is not None:
        checks = checks.filter(campaign=chosen)
    for name, column in (("session", "session_id"), ("chapter", "chapter_id")):
        if filters.get(name):
            checks = checks.filter(**{column: filters[name]})
    if filters.get("system"):
        checks = checks.filter(system=filters["system"])
    secret_filters = {name: filters[name] for name in ("character", "outcome") if filters.get(name)}
    if secret_filters.get("character"):
        checks = checks.filter(character_id=secret_filters["character"])
    if secret_filters.get("outcome"):
        checks = checks.filter(outcome=secret_filters["outcome"])

    # Visibility first on light rows, then the page's full rows: a hidden roll is a stub, and
    # it never matches a filter on what it hides (who rolled it, how it came out).
    light = (
        checks.select_related(None)
        .order_by("-created_at", "-seq")
        .only("pk", "campaign_id", "visibility", "revealed", "audience")
    )
    shown: list[tuple[int, bool]] = []
    for check in light.iterator(2000):
        visible = may_see(check, by_campaign[check.campaign_id])
        if visible or not secret_filters:
            shown.append((check.pk, visible))
    page = Paginator(shown, AUDIT_PAGE).get_page(request.GET.get("page"))
    full = Check.objects.in_bulk([pk for pk, _visible in page.object_list])
    page_checks = [full[pk] for pk, _visible in page.object_list]
    campaign_ids = {check.campaign_id for check in page_checks}
    names = dict(Character.objects.filter(campaign_id__in=campaign_ids).values_list("pk", "name"))
    numbers = {
        **dict(Session.objects.filter(campaign_id__in=campaign_ids).values_list("pk", "number")),
        **dict(Chapter.objects.filter(campaign_id__in=campaign_ids).values_list("pk", "number")),
    }
    usernames = dict(
        get_user_model()
        .objects.filter(pk__in={check.actor_id for check in page_checks})
        .values_list("pk", "username")
    )
    rows = []
    nows: dict[int, eligibility.Now] = {}  # one reading of each campaign's table for its rows
    for check in page_checks:
        membership = by_campaign[check.campaign_id]
        now = nows.setdefault(check.campaign_id, eligibility.Now(membership.campaign, membership))
        data = present_check(check, membership, now)
        rows.append(
            {
                "key": f"{check.campaign_id}-{check.seq}",
                "check": check,
                "data": data,
                "visible": not data["redacted"],
                "character": names.get(check.character_id, ""),
                "session": numbers.get(check.session_id),
                "chapter": numbers.get(check.chapter_id),
                "actor": usernames.get(check.actor_id, ""),
                "campaign": membership.campaign,
            }
        )
    campaigns = [chosen] if chosen else [m.campaign for m in memberships]
    gm_of = {m.campaign_id for m in memberships if m.role == Role.GM}
    query.pop("page", None)
    return render(
        request,
        "campaign/audit.html",
        {
            "form": form,
            "rows": rows,
            "page": page,
            "query": query.urlencode(),
            "chosen": chosen,
            "campaign": chosen,
            "membership": by_campaign.get(chosen.pk) if chosen else None,
            "is_gm": bool(chosen and chosen.pk in gm_of),
            "verification": _verification(campaigns, by_campaign),
            "strings": ui_strings(),
            "audit_data": {row["key"]: row["data"] for row in rows if row["visible"]},
            "page_name": "audit",
        },
    )


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
