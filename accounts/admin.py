"""The admin lists who holds an API token, never the token itself (its key is a password, and
also the row's primary key and its str(), so the admin gets no change, delete or bulk-action
views for tokens: each would print it). Setting a user's password revokes their token."""

from __future__ import annotations

from django.contrib import admin
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from eventlog.admin import ReadOnlyAdmin


class TokenHoldersAdmin(ReadOnlyAdmin):
    list_display = ["user", "created"]
    list_display_links = None
    search_fields = TokenAdmin.search_fields
    ordering = TokenAdmin.ordering
    actions = None

    def get_urls(self):
        return [url for url in super().get_urls() if url.name and url.name.endswith("changelist")]


admin.site.unregister(TokenProxy)
admin.site.register(TokenProxy, TokenHoldersAdmin)
