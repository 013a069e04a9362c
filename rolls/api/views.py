"""REST views for checks, follow-ups, calls, the event log and the rule state panels."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import HttpResponse
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign.api.views import body, campaign_for, known_fields
from campaign.api.writes import WriteView
from campaign.errors import InvalidInput, NotFound
from campaign.limits import MAX_INT
from campaign.models import Membership, Role
from config.schema import json_body
from eventlog.event_types import ALL_TYPES
from rolls.api.serializers import (
    AgainSerializer,
    CallSerializer,
    CheckSerializer,
    EventSerializer,
    ExportSerializer,
    ExtraNiceSerializer,
    FortuneSerializer,
    OddsSerializer,
    ParsedLineSerializer,
    TaskResetSerializer,
    WillpowerRestoredSerializer,
    WillpowerSerializer,
    call_schema,
    check_request_schema,
    line_schema,
)
from rolls.checks import calls, followups, rollbox, services
from rolls.models import Check
from rolls.reads import selectors
from rolls.reads.allowances import allowances_for
from rolls.reads.present import present_check, present_checks
from rolls.reads.selectors import call_data, open_calls_for
from rolls.trust.export import checks_csv, export_campaign


def json_object(request: Request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise InvalidInput("non_field_errors", gettext("expected a JSON object"))
    return request.data


SEQ_PARAM = {"type": "integer", "minimum": 0, "maximum": MAX_INT}  # what _int_param accepts


def _int_param(request: Request, name: str, default: int | None = None) -> int | None:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidInput(name, gettext("must be an integer")) from None
    if not 0 <= value <= MAX_INT:
        raise InvalidInput(name, gettext("must be from 0 to %(max)d") % {"max": MAX_INT})
    return value


class CheckListView(WriteView):
    @extend_schema(
        responses=CheckSerializer(many=True),
        parameters=[
            OpenApiParameter(
                "after", SEQ_PARAM, description="checks with seq > after, oldest first"
            ),
            OpenApiParameter(
                "before", SEQ_PARAM, description="the newest checks with seq < before, oldest first"
            ),
            OpenApiParameter("limit", SEQ_PARAM, description="at most 500"),
        ],
        summary="Checks, as I may see them",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        after = _int_param(request, "after", 0)
        before = _int_param(request, "before")
        limit = min(_int_param(request, "limit", 100) or 100, 500)
        checks = Check.objects.filter(campaign=campaign, seq__gt=after)
        if before is None:
            page = list(checks.order_by("seq")[:limit])
        else:
            # A feed's "show older": the page just below what it shows.
            page = list(checks.filter(seq__lt=before).order_by("-seq")[:limit])[::-1]
        return Response(present_checks(page, membership))

    @extend_schema(
        request=json_body(check_request_schema()),
        responses={201: CheckSerializer},
        summary="Roll a check",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        check = services.check_roll(
            campaign=campaign,
            actor=request.user,
            request=json_object(request),
            membership=membership,
        )
        return Response(present_check(check, membership), status=status.HTTP_201_CREATED)


class ParseView(APIView):
    @extend_schema(
        request=json_body(line_schema()),
        responses=ParsedLineSerializer,
        summary="Read a line of the roll box: the check it names and its odds, no roll",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        data = json_object(request)
        unknown = sorted(set(data) - {"text", "character", "characters", "target"})
        if unknown:
            raise InvalidInput(unknown[0], gettext("unknown field"))
        return Response(
            rollbox.preview_line(
                campaign=campaign,
                actor=request.user,
                text=data.get("text"),
                character=data.get("character"),
                target=data.get("target"),
                characters=data.get("characters"),
            )
        )


class AgainView(WriteView):
    @extend_schema(
        request=AgainSerializer,
        responses={201: CheckSerializer},
        summary="Roll one's own check again, from the request it recorded",
    )
    def post(self, request: Request, campaign_id: int, seq: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        check = rollbox.roll_again(
            campaign=campaign, actor=request.user, seq=seq, changes=body(request, AgainSerializer)
        )
        return Response(present_check(check, membership), status=status.HTTP_201_CREATED)


class OddsView(APIView):
    throttle_classes = ()  # rolls nothing: the composer asks on every change of the form

    @extend_schema(
        request=json_body(check_request_schema()),
        responses=OddsSerializer,
        summary="Odds, no roll",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        return Response(
            services.preview_odds(
                campaign=campaign, actor=request.user, request=json_object(request)
            )
        )


class CheckDetailView(APIView):
    @extend_schema(responses=CheckSerializer)
    def get(self, request: Request, campaign_id: int, seq: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        check = Check.objects.filter(campaign=campaign, seq=seq).first()
        if check is None:
            raise NotFound("check", gettext("no such check in this campaign"))
        return Response(present_check(check, membership))


class DramaticFailureView(WriteView):
    @extend_schema(request=None, responses=CheckSerializer, summary="CofD: fail dramatically")
    def post(self, request: Request, campaign_id: int, seq: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        check = followups.take_dramatic_failure(campaign=campaign, actor=request.user, seq=seq)
        return Response(present_check(check, membership))


class FortuneView(WriteView):
    @extend_schema(request=FortuneSerializer, responses=CheckSerializer, summary="AGE: Fortune")
    def post(self, request: Request, campaign_id: int, seq: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        data = known_fields(request, FortuneSerializer)  # the service validates, after visibility
        check = followups.spend_fortune(
            campaign=campaign,
            actor=request.user,
            seq=seq,
            die=data.get("die"),
            value=data.get("value"),
        )
        return Response(present_check(check, membership))


class ExtraNiceView(WriteView):
    @extend_schema(request=ExtraNiceSerializer, responses=CheckSerializer, summary="Extra Nice!")
    def post(self, request: Request, campaign_id: int, seq: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        data = known_fields(request, ExtraNiceSerializer)  # the service validates, after visibility
        check = followups.take_extra_nice(
            campaign=campaign, actor=request.user, seq=seq, count=data.get("count")
        )
        return Response(present_check(check, membership))


class RevealView(WriteView):
    @extend_schema(request=None, responses=CheckSerializer, summary="GM: reveal a hidden roll")
    def post(self, request: Request, campaign_id: int, seq: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        check = services.reveal_check(campaign=campaign, actor=request.user, seq=seq)
        return Response(present_check(check, membership))


class WillpowerRestoreView(WriteView):
    @extend_schema(
        request=WillpowerSerializer,
        responses=WillpowerRestoredSerializer,
        summary="GM: restore Willpower",
    )
    def post(self, request: Request, campaign_id: int, character_id: str) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        character = services.restore_willpower(
            campaign=campaign,
            actor=request.user,
            character_id=character_id,
            amount=body(request, WillpowerSerializer)["amount"],
        )
        return Response({"character": str(character.pk), "resources": character.resources})


class TaskResetView(WriteView):
    @extend_schema(request=TaskResetSerializer, responses={204: None}, summary="GM: reset a retry")
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        data = body(request, TaskResetSerializer)
        services.reset_task(
            campaign=campaign,
            actor=request.user,
            character_id=str(data["character"]),
            task=data["task"],
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class CallListView(WriteView):
    @extend_schema(
        responses=CallSerializer(many=True), summary="Open calls for a check (mine, or all)"
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        return Response(open_calls_for(campaign, membership))

    @extend_schema(
        request=json_body(call_schema()), responses={201: CallSerializer}, summary="GM: call"
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        data = json_object(request)
        unknown = sorted(set(data) - {"characters", "request"})
        if unknown:
            raise InvalidInput(unknown[0], gettext("unknown field"))
        call = calls.call_for_check(
            campaign=campaign,
            actor=request.user,
            character_ids=data.get("characters"),
            request=data.get("request", {}),
        )
        return Response(call_data(call), status=status.HTTP_201_CREATED)


class CallCloseView(WriteView):
    @extend_schema(request=None, responses={204: None}, summary="GM: close a call")
    def post(self, request: Request, campaign_id: int, call_id: str) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        calls.close_call(campaign=campaign, actor=request.user, call_id=call_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class EventListView(APIView):
    error_statuses = ("409",)  # history_changed: a witness's hash is no longer the log's

    @extend_schema(
        responses=EventSerializer(many=True),
        parameters=[
            OpenApiParameter(
                "after",
                {"type": "string", "pattern": "^[0-9]{1,18}(:[0-9a-f]{64})?$"},  # parse_after
                description="cursor: events with seq > after; `<seq>:<hash>` also checks that "
                "event seq still has the hash the client saw (a witness), else 409 "
                "history_changed with seq, hash and head",
            ),
            OpenApiParameter("until", SEQ_PARAM),
            OpenApiParameter("limit", SEQ_PARAM, description="at most 1000"),
            OpenApiParameter(
                "type",
                str,
                many=True,
                enum=list(ALL_TYPES),
                description="only events of these types (repeat the parameter for several)",
            ),
            OpenApiParameter("session", OpenApiTypes.UUID),
            OpenApiParameter("chapter", OpenApiTypes.UUID),
            OpenApiParameter("character", OpenApiTypes.UUID),
        ],
        summary="The event log, as I may see it",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        filters = {}
        for name in ("session", "chapter", "character"):
            value = request.query_params.get(name)
            if value is not None:  # present: an id (the schema's uuid), even if empty
                filters[name] = _uuid(name, value)
        after, witness = selectors.parse_after(request.query_params.get("after") or "0")
        selectors.check_witness(campaign.pk, after, witness, campaign.head_seq)
        events = selectors.events_for(
            membership=membership,
            after=after,
            until=_int_param(request, "until"),
            types=_event_types(request.query_params.getlist("type")),
            limit=min(_int_param(request, "limit", 200) or 200, 1000),
            **filters,
        )
        return Response(events)


def _event_types(values: list[str]) -> list[str] | None:
    """The ``type`` filter: names from the event vocabulary, each once (the page's statement is
    prepared per number of types); any other value, an empty one too (the schema's enum has
    none), is refused, not answered with an empty page."""
    wrong = next((value for value in values if value not in ALL_TYPES), None)
    if wrong is not None:
        shown = wrong if len(wrong) <= 40 else wrong[:40] + "…"
        raise InvalidInput(
            "type",
            gettext("“%(value)s” is not an event type (the API schema lists them)")
            % {"value": shown},
        )
    return list(dict.fromkeys(values)) or None


def _uuid(name: str, value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise InvalidInput(name, gettext("is not an id")) from None


class RuleStateView(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT, summary="What the stateful rules track now")
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        return Response(allowances_for(campaign, membership))


class ExportView(APIView):
    @extend_schema(
        responses=ExportSerializer,
        summary="The log for verification (GM: whole; others: hidden events redacted)",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign, membership = campaign_for(request, campaign_id)
        return Response(export_campaign(campaign, membership=_unless_gm(membership)))


class ExportCsvView(APIView):
    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR}, summary="Checks as CSV")
    def get(self, request: Request, campaign_id: int) -> HttpResponse:
        campaign, membership = campaign_for(request, campaign_id)
        body = checks_csv(campaign, membership=_unless_gm(membership))
        response = HttpResponse(body, content_type="text/csv; charset=utf-8")
        filename = f"campaign-{campaign.pk}-checks.csv"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


def _unless_gm(membership: Membership) -> Membership | None:
    """GMs export everything; anyone else gets hidden rolls redacted (still chain-checked)."""
    return None if membership.role == Role.GM else membership
