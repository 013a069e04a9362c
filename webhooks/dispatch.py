"""Sending public events to webhooks: in order, signed, retried with backoff, never in a roll.

The campaign's log is the outbox. A background thread per process wakes when an event commits
(and every few seconds), leases each webhook (one sender across processes, no transaction held
during HTTP), sends the next public events after its cursor, and records each attempt. A failed
send is retried after 2, 4, 8 … seconds (at most an hour) up to ``MAX_ATTEMPTS`` times, then
logged as failed and passed over, so one dead receiver delays only its own webhook.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connections
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from campaign.models import Campaign
from eventlog import event_types as types
from eventlog.models import Event
from eventlog.stream import on_event_committed
from rolls.reads.chronicle import chronicle_entry
from rolls.reads.present import present_events
from rolls.reads.visibility import outsider
from rolls.words import SYSTEM_NAMES
from webhooks.models import Delivery, Webhook
from webhooks.policy import PUBLIC, check_url, public_types

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 8
LEASE = timedelta(seconds=60)
BATCH = 20  # events per webhook per pass: a long backlog never starves the other webhooks
SIGNATURE_HEADER = "X-Tablecheck-Signature"


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """``t=<unix time>,v1=<hex HMAC-SHA256 of "<t>." + body>``; receivers recompute and compare,
    and refuse a timestamp too far from their clock (replays)."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={digest.hexdigest()}"


def backoff(attempts: int) -> timedelta:
    return timedelta(seconds=min(2**attempts, 3600))


def deliver_due(*, now: datetime | None = None) -> int:
    """One pass over every active webhook; returns how many events were delivered."""
    delivered = 0
    for webhook_id in Webhook.objects.filter(active=True).values_list("pk", flat=True):
        moment = now or timezone.now()
        if _lease(webhook_id, moment):
            try:
                delivered += _drain(Webhook.objects.get(pk=webhook_id), moment)
            finally:
                Webhook.objects.filter(pk=webhook_id).update(lease_until=None)
    return delivered


def _lease(webhook_id: int, now: datetime) -> bool:
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    return bool(Webhook.objects.filter(free, pk=webhook_id).update(lease_until=now + LEASE))


def _drain(webhook: Webhook, now: datetime) -> int:
    events = list(
        Event.objects.filter(
            campaign_id=webhook.campaign_id,
            seq__gt=webhook.delivered_seq,
            visibility=PUBLIC,
            type__in=public_types(webhook.event_types),
        ).order_by("seq")[:BATCH]
    )
    delivered = 0
    for event in events:
        delivery, _ = Delivery.objects.get_or_create(
            webhook=webhook, seq=event.seq, defaults={"event_type": event.type}
        )
        if delivery.next_attempt_at and delivery.next_attempt_at > now:
            break  # in order: later events wait behind this one
        with translation.override(webhook.language):  # the delivery log speaks the hook's language
            ok, code, error = _send(webhook, event)
        delivery.attempts += 1
        delivery.response_code, delivery.error = code, error[:300]
        if ok:
            delivery.status, delivery.next_attempt_at = Delivery.Status.DELIVERED, None
        elif delivery.attempts >= MAX_ATTEMPTS:
            delivery.status, delivery.next_attempt_at = Delivery.Status.FAILED, None
        else:
            delivery.next_attempt_at = now + backoff(delivery.attempts)
        delivery.save()
        if delivery.status == Delivery.Status.PENDING:
            break
        Webhook.objects.filter(pk=webhook.pk).update(delivered_seq=event.seq)
        delivered += ok
    return delivered


def _send(webhook: Webhook, event: Event) -> tuple[bool, int | None, str]:
    try:
        check_url(webhook.url)  # again now: a name may resolve elsewhere than when it was added
        body = json.dumps(payload_for(webhook, event), ensure_ascii=False).encode()
    except Exception as error:
        return False, None, str(error)
    timestamp = int(time.time())
    request = urllib.request.Request(
        webhook.url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": "Tablecheck-Webhook/1",
            "X-Tablecheck-Event": event.type,
            "X-Tablecheck-Delivery": f"{webhook.campaign_id}:{event.seq}",
            SIGNATURE_HEADER: sign(webhook.secret, timestamp, body),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=settings.WEBHOOK_TIMEOUT) as response:
            return 200 <= response.status < 300, response.status, ""
    except urllib.error.HTTPError as error:
        return False, error.code, f"HTTP {error.code}"
    except Exception as error:
        return False, None, f"{type(error).__name__}: {error}"


def payload_for(webhook: Webhook, event: Event) -> dict[str, Any]:
    """The event as an observer of the table sees it (so never hidden content)."""
    observer = outsider(webhook.campaign_id)
    (shown,) = present_events([event], observer)
    revealed = None
    if event.type == types.CHECK_REVEALED:  # the roll is public now: send what it was
        target = Event.objects.filter(
            campaign_id=webhook.campaign_id, seq=event.payload.get("check_seq")
        ).first()
        revealed = present_events([target], observer)[0] if target else None
    if webhook.format == Webhook.Format.DISCORD:
        return discord_payload(webhook, revealed or shown, revealed=revealed is not None)
    return {"campaign": webhook.campaign_id, "event": shown, "revealed": revealed}


def discord_payload(
    webhook: Webhook, shown: dict[str, Any], *, revealed: bool = False
) -> dict[str, Any]:
    """A Discord "execute webhook" body: one embed in the campaign's language."""
    campaign = Campaign.objects.only("name", "system").get(pk=webhook.campaign_id)
    with translation.override(webhook.language):
        entry = chronicle_entry(campaign.system, shown)
        title = entry.title if entry else shown["type"]
        if revealed:
            title = _("Revealed: {title}").format(title=title)
        fields = [
            {
                "name": line.character,
                "value": f"{line.terms} → `{line.dice or '—'}` → **{line.outcome}**"
                + (f" ({line.detail})" if line.detail else ""),
                "inline": False,
            }
            for line in (entry.rolls if entry else [])
        ]
        system = str(SYSTEM_NAMES.get(campaign.system, campaign.system))
    return {
        "username": "Tablecheck",
        "allowed_mentions": {"parse": []},
        "embeds": [
            {
                "title": title[:256],
                "fields": fields[:25],
                "footer": {"text": f"{campaign.name} · {system} · #{shown['seq']}"[:2048]},
                "timestamp": shown["created_at"],
            }
        ],
    }


# --- the background sender ------------------------------------------------------------------

_wake = threading.Event()
_thread: threading.Thread | None = None
_thread_lock = threading.Lock()


def _loop() -> None:
    """Send until no campaign has a webhook left (the next public event may start it again)."""
    while True:
        _wake.wait(settings.WEBHOOK_POLL_SECONDS)
        _wake.clear()
        try:
            close_old_connections()
            if not Webhook.objects.filter(active=True).exists():
                return
            deliver_due()
        except Exception:  # the database went away, say: stop; the next event starts over
            logger.exception(
                "webhooks: a delivery pass failed; the sender stops until the next event"
            )
            return
        finally:
            # Not kept while the thread sleeps (SQLite keeps a connection per thread; a
            # pooled one goes back to the pool), and closing needs no database.
            connections.close_all()


_looked_at = 0.0  # when this process last looked for a webhook before it had a sender


def _wake_up(event: Event) -> None:
    global _thread, _looked_at
    if event.visibility != PUBLIC or not settings.WEBHOOKS_IN_PROCESS:
        return
    with _thread_lock:
        if _thread is None or not _thread.is_alive():
            # No sender thread until some campaign has a webhook (looked up at most every 30 s).
            if time.monotonic() - _looked_at < 30:
                return
            _looked_at = time.monotonic()
            if not Webhook.objects.filter(active=True).exists():
                return
            _thread = threading.Thread(target=_loop, name="webhooks", daemon=True)
            _thread.start()
    _wake.set()


def look_again() -> None:
    """A webhook was just added here: the next public event may start the sender."""
    global _looked_at
    _looked_at = 0.0


def start_on_commit() -> None:
    on_event_committed(_wake_up)
