"""Adding and removing a campaign's webhooks (the GM's), and the checks on their URLs."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from campaign.access import require_gm
from campaign.errors import InvalidInput, NotFound
from campaign.models import Campaign
from webhooks import dispatch
from webhooks.models import Webhook
from webhooks.policy import EVENT_TYPES, LANGUAGES, check_url

MAX_WEBHOOKS = 5  # per campaign: a table posts to its channel, not to a fleet


def _event_types(value: Any) -> list[str]:
    if value in (None, ""):
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InvalidInput("event_types", _("a list of event types"))
    unknown = sorted(set(value) - set(EVENT_TYPES))
    if unknown:
        listed = ", ".join(unknown[:5])
        raise InvalidInput("event_types", _("unknown event types: {types}").format(types=listed))
    return sorted(set(value))


@transaction.atomic
def create_webhook(
    *,
    campaign: Campaign,
    actor: AbstractBaseUser,
    url: Any = None,
    event_types: Any = None,
    format: Any = Webhook.Format.JSON,
    language: Any = "ru",
    secret: Any = None,
) -> Webhook:
    """Start sending the campaign's public events from now on (history is not replayed)."""
    require_gm(campaign, actor)
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    if Webhook.objects.filter(campaign=campaign).count() >= MAX_WEBHOOKS:
        raise InvalidInput("url", _("a campaign has at most {n} webhooks").format(n=MAX_WEBHOOKS))
    if format not in Webhook.Format.values:
        formats = ", ".join(Webhook.Format.values)
        raise InvalidInput("format", _("one of {choices}").format(choices=formats))
    if language not in LANGUAGES:
        raise InvalidInput("language", _("one of {choices}").format(choices=", ".join(LANGUAGES)))
    if secret in (None, ""):
        secret = secrets.token_hex(32)
    elif not isinstance(secret, str) or not 16 <= len(secret) <= 64:
        raise InvalidInput("secret", _("16 to 64 characters, or leave it out to get one"))
    webhook = Webhook.objects.create(
        campaign=campaign,
        url=check_url(url),
        secret=secret,
        event_types=_event_types(event_types),
        format=format,
        language=language,
        delivered_seq=campaign.head_seq,
        created_by=actor,
    )
    transaction.on_commit(dispatch.look_again)
    return webhook


def webhook_of(campaign: Campaign, webhook_id: Any) -> Webhook:
    webhook = Webhook.objects.filter(campaign=campaign, pk=_int(webhook_id)).first()
    if webhook is None:
        raise NotFound("webhook", _("no such webhook in this campaign"))
    return webhook


def _int(value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return 0
    return number if 0 < number < 2**63 else 0


@transaction.atomic
def delete_webhook(*, campaign: Campaign, actor: AbstractBaseUser, webhook_id: Any) -> None:
    require_gm(campaign, actor)
    webhook_of(campaign, webhook_id).delete()
