"""The GM's webhooks over the API: list, add (the secret is shown once), remove, delivery log."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from campaign.access import require_gm
from campaign.api.views import campaign_for
from campaign.api.writes import WriteView
from campaign.errors import InvalidInput
from config.schema import component, json_body
from webhooks import services
from webhooks.models import Delivery, Webhook
from webhooks.policy import EVENT_TYPES, LANGUAGES

DELIVERY_LOG = 100

WEBHOOK_REQUEST = {
    "type": "object",
    "properties": {
        "url": {
            "type": "string",
            "format": "uri",
            "maxLength": 500,
            "pattern": "^https?://[^/?#\\s]+",
            "description": "http(s), not in a private network (unless WEBHOOK_ALLOW_PRIVATE)",
        },
        "event_types": {
            "type": "array",
            "items": {"type": "string", "enum": list(EVENT_TYPES)},
            "maxItems": 50,
            "description": "which events to send (none: all of them)",
        },
        "format": {"type": "string", "enum": list(Webhook.Format.values)},
        "language": {"type": "string", "enum": list(LANGUAGES)},
        "secret": {
            "type": "string",
            "minLength": 16,
            "maxLength": 64,
            "pattern": "^[^\\u0000]*$",
            "description": "the HMAC key (left out: the server makes one)",
        },
    },
    "required": ["url"],
    "additionalProperties": False,
}
WEBHOOK = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "url": {"type": "string"},
        "event_types": {"type": "array", "items": {"type": "string"}},
        "format": {"type": "string", "enum": list(Webhook.Format.values)},
        "language": {"type": "string"},
        "active": {"type": "boolean"},
        "delivered_seq": {"type": "integer"},
        "created_at": {"type": "string", "format": "date-time"},
    },
    "required": [
        "id",
        "url",
        "event_types",
        "format",
        "language",
        "active",
        "delivered_seq",
        "created_at",
    ],
}
DELIVERY = {
    "type": "object",
    "properties": {
        "seq": {"type": "integer"},
        "event_type": {"type": "string"},
        "status": {"type": "string"},
        "attempts": {"type": "integer"},
        "response_code": {"type": "integer", "nullable": True},
        "error": {"type": "string"},
        "next_attempt_at": {"type": "string", "format": "date-time", "nullable": True},
        "updated_at": {"type": "string", "format": "date-time"},
    },
    "required": ["seq", "event_type", "status", "attempts", "updated_at"],
}


def webhook_data(webhook: Webhook) -> dict[str, Any]:
    return {
        "id": webhook.pk,
        "url": webhook.url,
        "event_types": webhook.event_types,
        "format": webhook.format,
        "language": webhook.language,
        "active": webhook.active,
        "delivered_seq": webhook.delivered_seq,
        "created_at": webhook.created_at,
    }


def delivery_data(delivery: Delivery) -> dict[str, Any]:
    return {
        "seq": delivery.seq,
        "event_type": delivery.event_type,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "response_code": delivery.response_code,
        "error": delivery.error,
        "next_attempt_at": delivery.next_attempt_at,
        "updated_at": delivery.updated_at,
    }


class WebhookListView(WriteView):
    @extend_schema(
        responses={200: {"type": "array", "items": component("Webhook", WEBHOOK)}},
        summary="The campaign's webhooks (GM)",
    )
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        require_gm(campaign, request.user)
        return Response([webhook_data(w) for w in Webhook.objects.filter(campaign=campaign)])

    @extend_schema(
        request=json_body(component("WebhookRequest", WEBHOOK_REQUEST)),
        responses={
            201: {
                "allOf": [
                    {"$ref": "#/components/schemas/Webhook"},
                    {
                        "type": "object",
                        "properties": {"secret": {"type": "string"}},
                        "required": ["secret"],
                    },
                ]
            }
        },
        summary="Send the campaign's public events to a URL (GM); the secret is shown only now",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        if not isinstance(request.data, dict):
            raise InvalidInput("non_field_errors", gettext("expected a JSON object"))
        data = request.data
        known = {"url", "event_types", "format", "language", "secret"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidInput(unknown[0], gettext("unknown field"))
        webhook = services.create_webhook(
            campaign=campaign, actor=request.user, **{k: data.get(k) for k in known if k in data}
        )
        return Response(
            {**webhook_data(webhook), "secret": webhook.secret}, status=status.HTTP_201_CREATED
        )


class WebhookDetailView(WriteView):
    @extend_schema(responses={204: None}, summary="Stop sending to this webhook (GM)")
    def delete(self, request: Request, campaign_id: int, webhook_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        services.delete_webhook(campaign=campaign, actor=request.user, webhook_id=webhook_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DeliveryListView(APIView):
    @extend_schema(
        responses={200: {"type": "array", "items": component("Delivery", DELIVERY)}},
        summary="The webhook's latest deliveries (GM)",
    )
    def get(self, request: Request, campaign_id: int, webhook_id: int) -> Response:
        campaign, _ = campaign_for(request, campaign_id)
        require_gm(campaign, request.user)
        webhook = services.webhook_of(campaign, webhook_id)
        deliveries = webhook.deliveries.all()[:DELIVERY_LOG]
        return Response([delivery_data(d) for d in deliveries])
