"""`ReadOnlyAdmin`: what the log and every read model projected from it use in the Django admin
(changes go through the services, which append events). The Event's own admin is in
rolls/admin.py: showing an event means asking who may see its roll."""

from __future__ import annotations

from django.contrib import admin
from django.db.models.constants import LOOKUP_SEP


class ReadOnlyAdmin(admin.ModelAdmin):
    """Projections are rebuilt from the log; editing them here would make them lie.

    The changelist filters on its `list_filter` fields and `lookup_fields` only: Django lets any
    query-string lookup on a model's own columns through (``?payload__icontains=…``,
    ``?key__startswith=a``), which would make the list an oracle for what a page does not show
    (a hidden roll's payload, a token, an invite code)."""

    lookup_fields: tuple[str, ...] = ()

    def get_queryset(self, request):
        # The changelist joins `list_select_related` only to a queryset that joins nothing yet,
        # and a model's manager may join already (Check's joins its event): each row's campaign
        # was then read in a statement of its own.
        rows = super().get_queryset(request)
        if isinstance(self.list_select_related, list | tuple):
            rows = rows.select_related(*self.list_select_related)
        return rows

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def lookup_allowed(self, lookup, value, request=None) -> bool:
        filtered = {
            item if isinstance(item, str) else item[0]
            for item in self.list_filter
            if isinstance(item, str | tuple | list)
        }
        allowed = filtered | set(self.lookup_fields)
        field = lookup.split(LOOKUP_SEP)[0]
        return field in allowed and super().lookup_allowed(lookup, value, request)
