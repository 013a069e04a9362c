"""What a webhook may receive (public events of the listed types) and where it may send (out of
the server's own network): shared by the services that add webhooks and the sender."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext as _

from campaign.errors import InvalidInput
from eventlog import event_types as types
from eventlog.models import Visibility

PUBLIC = Visibility.PUBLIC
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


def public_types(event_types: Sequence[str]) -> list[str]:
    return list(event_types) or list(EVENT_TYPES)
