"""The event log in the Django admin: visible, never editable. `ReadOnlyAdmin` is also what every
read model projected from the log uses (changes go through the services, which append events)."""

from __future__ import annotations

from django.contrib import admin

from eventlog.models import Event


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
