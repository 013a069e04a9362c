"""After the session: the luck report and the session chronicle, over the API."""

from __future__ import annotations

from dataclasses import asdict

from django.http import HttpResponse
from django.template.loader import render_to_string
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign.api.views import campaign_for
from campaign.errors import InvalidInput, NotFound
from campaign.models import Campaign, Session
from rolls.reads.chronicle import session_chronicle, to_markdown
from rolls.reads.luck import luck_report

CHRONICLE_FORMATS = ("json", "md", "html")


def session_of(campaign: Campaign, number: int) -> Session:
    session = Session.objects.filter(campaign=campaign, number=number).first()
    if session is None:
        raise NotFound("session", "no such session in this campaign")
    return session


class LuckReportView(APIView):
    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        summary="Luck and fairness of every roll you may see, across the campaign",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        return Response(luck_report(campaign=campaign, membership=membership))


class SessionLuckReportView(APIView):
    @extend_schema(
        responses=OpenApiTypes.OBJECT,
        summary="Luck and fairness of every roll you may see, in one session",
    )
    def get(self, request: Request, campaign_id: int, number: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        session = session_of(campaign, number)
        return Response(luck_report(campaign=campaign, membership=membership, session=session))


class ChronicleView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("as", str, enum=list(CHRONICLE_FORMATS))],
        responses={
            (200, "application/json"): OpenApiTypes.OBJECT,
            (200, "text/markdown"): OpenApiTypes.STR,
            (200, "text/html"): OpenApiTypes.STR,
        },
        summary="A session's chronicle (JSON, Markdown or printable HTML), as you may see it",
    )
    def get(self, request: Request, campaign_id: int, number: int) -> Response | HttpResponse:
        campaign, membership = campaign_for(request, campaign_id)
        session = session_of(campaign, number)
        wanted = request.query_params.get("as", "json")
        if wanted not in CHRONICLE_FORMATS:
            raise InvalidInput("as", f"must be one of {', '.join(CHRONICLE_FORMATS)}")
        chronicle = session_chronicle(campaign=campaign, membership=membership, session=session)
        if wanted == "json":
            return Response(asdict(chronicle))
        filename = f"campaign-{campaign.pk}-session-{session.number}"
        if wanted == "md":
            markdown = to_markdown(chronicle)
            response = HttpResponse(markdown, content_type="text/markdown; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="{filename}.md"'
            return response
        body = render_to_string(
            "reports/chronicle_print.html",
            {"chronicle": chronicle, "time_zone": timezone.get_current_timezone_name()},
            request=request._request,
        )
        response = HttpResponse(body, content_type="text/html; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{filename}.html"'
        return response
