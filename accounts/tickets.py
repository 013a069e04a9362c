"""Socket tickets: fetched over REST with the API token, spent once by the WebSocket handshake."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from accounts.models import SocketTicket

TICKET_SECONDS = 60


def _digest(ticket: str) -> str:
    return hashlib.sha256(ticket.encode()).hexdigest()


@transaction.atomic
def issue_ticket(*, user: AbstractBaseUser) -> str:
    now = timezone.now()
    SocketTicket.objects.filter(expires_at__lt=now).delete()  # the table stays small
    ticket = secrets.token_urlsafe(32)
    SocketTicket.objects.create(
        digest=_digest(ticket), user=user, expires_at=now + timedelta(seconds=TICKET_SECONDS)
    )
    return ticket


def spend_ticket(ticket: str) -> AbstractBaseUser | None:
    """The ticket's user if it is valid; it is deleted either way (single use)."""
    if not ticket or len(ticket) > 100:
        return None
    found = SocketTicket.objects.filter(digest=_digest(ticket)).select_related("user").first()
    # Deleting is the claim: of two handshakes racing with one ticket, one deletes it.
    if found is None or not SocketTicket.objects.filter(pk=found.pk).delete()[0]:
        return None
    if found.expires_at < timezone.now() or not found.user.is_active:
        return None
    return found.user
