"""The admin lists who holds an API token, never the token itself (its key is a password)."""

from __future__ import annotations

from django.contrib import admin
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from accounts.revocation import revoke_access


class TokenHoldersAdmin(admin.ModelAdmin):
    list_display = ["user", "created"]
    fields = ["user", "created"]
    readonly_fields = ["user", "created"]
    search_fields = TokenAdmin.search_fields
    actions = ["revoke"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False  # a token is created by its user, who alone sees it

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.action(description="Revoke (and close the users' open sockets)")
    def revoke(self, request, queryset) -> None:
        for token in queryset.select_related("user"):
            revoke_access(user=token.user)


admin.site.unregister(TokenProxy)
admin.site.register(TokenProxy, TokenHoldersAdmin)
