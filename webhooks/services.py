"""Adding and removing a campaign's webhooks (the GM's), and the checks on their URLs."""

from __future__ import annotations

import ipaddress
import secrets
import socket
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from campaign.access import require_gm
from campaign.errors import InvalidInput, NotFound
from campaign.models import Campaign
from eventlog import event_types as types
from eventlog.models import Visibility
from webhooks.models import Webhook

MAX_WEBHOOKS = 5  # per campaign: a table posts to its channel, not to a fleet
# Event types a webhook may ask for; only their public events are ever sent.
EVENT_TYPES = (
    types.CHECK_ROLLED,
    types.CHECK_DRAMATIC_FAILURE_TAKEN,
    types.CHECK_FORTUNE_SPENT,
    types.CHECK_EXTRA_NICE_TAKEN,
    types.CHECK_REVEALED,
    types.CHECK_CALLED,
    types.SESSION_STARTED,
    types.SESSION_ENDED,
    types.CHAPTER_STARTED,
    types.CHAPTER_ENDED,
    types.SCENE_STARTED,
    types.SCENE_ENDED,
    types.MEMBER_JOINED,
)
LANGUAGES = ("ru", "en")


def check_url(url: Any, *, field: str = "url") -> str:
    """An http(s) URL that does not point into the server's own network (unless allowed)."""
    if not isinstance(url, str) or not url or len(url) > 500:
        raise InvalidInput(field, _("an http:// or https:// URL of at most 500 characters"))
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput(field, _("an http:// or https:// URL with a host"))
    if not settings.WEBHOOK_ALLOW_PRIVATE and _private(parts.hostname, parts.port):
        raise InvalidInput(field, _("this address is in a private network; webhooks go out only"))
    return url


def _private(host: str, port: int | None) -> bool:
    try:
        infos = socket.getaddrinfo(host, port or 443, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return False  # unresolvable now: delivery will fail and be logged
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global:
            return True
    return False


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
    transaction.on_commit(_sender_may_start)
    return webhook


def _sender_may_start() -> None:
    from webhooks import dispatch  # the sender imports these services

    dispatch.look_again()


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


def public_types(event_types: Sequence[str]) -> list[str]:
    return list(event_types) or list(EVENT_TYPES)


PUBLIC = Visibility.PUBLIC
