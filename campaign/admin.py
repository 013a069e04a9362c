"""The campaign's read models in the Django admin, read-only like the log they are projected from
(changes go through the services, which append events)."""

from __future__ import annotations

from django.contrib import admin

from campaign.models import (
    Campaign,
    Chapter,
    Character,
    IdempotentRequest,
    Membership,
    Scene,
    Session,
    SessionSecret,
)
from eventlog.admin import ReadOnlyAdmin


@admin.register(Campaign)
class CampaignAdmin(ReadOnlyAdmin):
    list_display = ["id", "name", "system", "head_seq", "created_at"]
    exclude = ["invite_code"]


@admin.register(Membership)
class MembershipAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "user", "role", "joined_seq"]
    list_filter = ["role"]


@admin.register(Character)
class CharacterAdmin(ReadOnlyAdmin):
    list_display = ["name", "campaign", "owner", "updated_seq"]
    search_fields = ["name"]


@admin.register(Chapter, Session, Scene)
class PeriodAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "number", "title", "started_at", "ended_at"]


@admin.register(SessionSecret)
class SessionSecretAdmin(ReadOnlyAdmin):
    """Listed so that nothing is hidden from the admin, but the seed itself is never shown:
    it is revealed by the session-ended event and not a moment before."""

    list_display = ["session_id", "campaign"]
    fields = ["session_id", "campaign"]


@admin.register(IdempotentRequest)
class IdempotentRequestAdmin(ReadOnlyAdmin):
    """The first answers kept for retries (campaign/idempotency.py); written with their writes."""

    list_display = ["created_at", "user", "campaign_id", "key", "status"]
    list_filter = ["status"]
    search_fields = ["key"]
