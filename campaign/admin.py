"""The Django admin: every model visible; the event log and everything projected from it are
read-only (changes go through the services, which append events)."""

from __future__ import annotations

from django.contrib import admin

from campaign.models import (
    Campaign,
    Chapter,
    Character,
    Event,
    IdempotentRequest,
    Membership,
    Scene,
    Session,
    SessionSecret,
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """Projections are rebuilt from the log; editing them here would make them lie."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "seq", "type", "actor", "visibility", "created_at", "short_hash"]
    list_filter = ["type", "visibility"]
    search_fields = ["type"]
    ordering = ["campaign", "-seq"]

    @admin.display(description="hash")
    def short_hash(self, event: Event) -> str:
        return event.hash[:12]


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
