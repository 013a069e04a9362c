"""Outgoing webhooks: where a campaign's public events are sent, and what became of each send.

Not events of play: a webhook's URL and secret are the GM's plumbing, and the secret must never
reach the (exported, append-only) log. The log itself is the outbox: each webhook keeps a cursor
(`delivered_seq`) into its campaign's stream, so recording a roll writes nothing extra here.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from campaign.models import Campaign


class Webhook(models.Model):
    class Format(models.TextChoices):
        JSON = "json", "JSON"
        DISCORD = "discord", "Discord"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=64)
    event_types = models.JSONField(default=list)  # empty: every public event
    format = models.CharField(max_length=10, choices=Format.choices, default=Format.JSON)
    language = models.CharField(max_length=5, default="ru")
    active = models.BooleanField(default=True)
    # The last seq handed over (delivered, or given up on after the last retry).
    delivered_seq = models.PositiveBigIntegerField(default=0)
    # A dispatcher owns the webhook until then: one sender per webhook across processes,
    # without holding a transaction open during the HTTP call.
    lease_until = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"webhook {self.pk} of campaign {self.campaign_id}"


class Delivery(models.Model):
    """One event's delivery to one webhook: its attempts and the last answer (the GM's log)."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    seq = models.PositiveBigIntegerField()
    event_type = models.CharField(max_length=40)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    response_code = models.PositiveIntegerField(null=True, blank=True)
    error = models.CharField(max_length=300, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-seq"]
        constraints = [
            models.UniqueConstraint(fields=["webhook", "seq"], name="one_delivery_per_event")
        ]

    def __str__(self) -> str:
        return f"delivery of #{self.seq} to webhook {self.webhook_id}: {self.status}"
