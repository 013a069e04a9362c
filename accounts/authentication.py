"""DRF's token authentication, read in one hand-written query (with the membership of the
campaign the request is about, if any, and the answer recorded for a write's Idempotency-Key).

Every request of a script, a bot or the generated client authenticates by token; DRF's
`select_related('user').get(key=…)` costs more in query building than the query itself does
(about a millisecond of a check's CPU). Same answers, same messages (DRF's own, translated).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request

from campaign import idempotency
from campaign.access import member_columns, member_join, remember_member
from campaign.models import Campaign, Membership
from eventlog import rows


class TokenAuthentication(authentication.TokenAuthentication):
    campaign_id: int | None = None
    key: str | None = None  # a write's Idempotency-Key (campaign/api/writes.py)

    def authenticate(self, request: Request) -> tuple[Any, Token] | None:
        # A request about a campaign reads the user's membership of it in the same statement
        # (campaign.access.member_with_campaign takes it from there): one round trip fewer.
        kwargs = (getattr(request, "parser_context", None) or {}).get("kwargs") or {}
        campaign_id = kwargs.get("campaign_id")
        self.campaign_id = campaign_id if isinstance(campaign_id, int) else None
        # And a write's recorded answer for its key (idempotency.earlier_answer takes it).
        key = None if request.method in SAFE_METHODS else request.META.get(idempotency.META_KEY)
        self.key = key if self.campaign_id is not None and idempotency.valid_key(key) else None
        # The header as WSGI keeps it: DRF reads `request.headers`, which names every header to
        # find this one (some 630 of a check's 50,000 bytecodes). A plain "Token <key>" is
        # what DRF would accept as it is, and no header at all is DRF's None (a page's fetch,
        # signed in by session); anything else (another scheme, a malformed one) gets DRF's
        # own answer.
        header = request.META.get("HTTP_AUTHORIZATION", "")
        scheme, _space, token = header.partition(" ")
        if scheme.lower() == self.keyword.lower() and token.isascii() and token.isalnum():
            return self.authenticate_credentials(token)
        if not header:
            return None
        return super().authenticate(request)

    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        user_model = get_user_model()
        width = rows.width(Token)
        users = width + rows.width(user_model)
        member, answer = self.campaign_id is not None, self.key is not None
        params = (
            *((self.campaign_id,) if member else ()),
            *((self.campaign_id, self.key) if answer else ()),
            key,
        )
        found = rows.fetchone(_token_sql(user_model, member, answer), params)
        if found is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        token = rows.instance(Token, found[:width])
        token.user = rows.instance(user_model, found[width:users])
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        if member:
            members = users + rows.width(Membership) + rows.width(Campaign)
            remember_member(token.user, self.campaign_id, found[users:members])
            if answer:
                idempotency.remember_answer(token.user, self.campaign_id, self.key, found[members:])
        return token.user, token


@cache  # the same text for every request of its shape: built once
def _token_sql(user_model: type[Any], member: bool, answer: bool) -> str:
    """The token's statement: its user, with the campaign's membership when ``member`` (a
    parameter: the campaign id) and a write's recorded answer when ``answer`` (two: the
    campaign id and the key); the token's key is the last parameter."""
    return (
        f"SELECT {rows.columns(Token, 't')}, {rows.columns(user_model, 'u')}"
        + (f", {member_columns()}" if member else "")
        + (f", {idempotency.answer_columns()}" if answer else "")
        + f" FROM {Token._meta.db_table} t JOIN {user_model._meta.db_table} u "
        "ON u.id = t.user_id "
        + (member_join("u") if member else "")
        + (f" {idempotency.answer_join('u')}" if answer else "")
        + " WHERE t.key = %s"
    )
