"""The admin lists who holds an API token, never the token itself (its key is a password, and
also the row's primary key and its str(), so the admin gets no change, delete or bulk-action
views for tokens: each would print it). Setting a user's password revokes their token.

Users: deactivating one (unticking *active*, or the action) ends their token and their open
live connections at once (`accounts.revocation.deactivate_user`); deleting one (the delete view
or the bulk action) goes through `accounts.deletion`, which records in each campaign's log what
it does there, or refuses with the reason on the confirmation page."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected as delete_selected_confirmed
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import TokenProxy

from accounts.deletion import Ties, account_ties, delete_user, delete_users
from accounts.revocation import deactivate_user
from campaign.errors import DomainError
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


class AccountAdmin(UserAdmin):
    actions = ["deactivate_selected", "delete_selected"]

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if change and "is_active" in form.changed_data and not obj.is_active:
            deactivate_user(user=obj)

    @admin.action(
        permissions=["change"],
        description=gettext_lazy(
            "Deactivate selected users (their API tokens and live connections end now)"
        ),
    )
    def deactivate_selected(self, request: HttpRequest, queryset: Any) -> None:
        users = list(queryset)
        with transaction.atomic():
            for user in users:
                deactivate_user(user=user)
        self.message_user(
            request,
            ngettext("%(count)d user deactivated.", "%(count)d users deactivated.", len(users))
            % {"count": len(users)},
            messages.SUCCESS,
        )

    @admin.action(
        permissions=["delete"],
        description=gettext_lazy("Delete selected %(verbose_name_plural)s"),
    )
    def delete_selected(self, request: HttpRequest, queryset: Any) -> HttpResponse | None:
        """Django's action (its confirmation page, then `delete_queryset`), all or nothing: a
        refusal that arises between the confirmation and the deletion deletes nobody."""
        try:
            with transaction.atomic():
                return delete_selected_confirmed(self, request, queryset)
        except DomainError as refusal:
            self.message_user(request, refusal.message, messages.ERROR)
            return None

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict | None = None
    ) -> HttpResponse:
        try:
            return super().delete_view(request, object_id, extra_context)
        except DomainError as refusal:  # arose after the confirmation page: it says why now
            self.message_user(request, refusal.message, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        delete_user(user=obj, by=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        delete_users(users=list(queryset), by=request.user)

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple:
        """The confirmation page: each account with what its deletion does to the campaigns,
        and as "protected" the reasons it is refused (the table's only game master)."""
        listed: list[Any] = []
        protected: list[str] = []
        for user in objs:
            ties = account_ties(user=user)
            listed += [user, _consequences(ties)]
            if refusal := ties.refusal():
                protected.append(refusal)
        opts = self.model._meta
        count = {opts.verbose_name_plural: len(listed) // 2}
        perms_needed = set() if self.has_delete_permission(request) else {opts.verbose_name}
        return listed, count, perms_needed, protected


def _consequences(ties: Ties) -> list[str]:
    return [
        *(
            _("leaves «{campaign}» (recorded in its log)").format(campaign=campaign.name)
            for campaign in ties.leaves
        ),
        *(
            _("character «{name}» stays in its campaign, with no owner").format(name=character.name)
            for character in ties.characters
        ),
    ]


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), AccountAdmin)
