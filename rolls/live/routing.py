"""WebSocket routes and the handshake's checks: origin, then who the user is.

Authentication: an API token (``?token=<key>`` on the URL, since browsers cannot set headers on
a WebSocket, or ``Authorization: Token <key>``), else the session cookie. A token that does not
match leaves the user anonymous; the consumer then closes with 4401.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from channels.auth import get_user
from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from channels.routing import URLRouter
from channels.security.websocket import AllowedHostsOriginValidator, WebsocketDenier
from channels.sessions import SessionMiddlewareStack
from django.contrib.auth.models import AnonymousUser
from django.urls import path, re_path
from rest_framework.authtoken.models import Token

from rolls.live.consumers import LiveFeedConsumer

websocket_urlpatterns = [
    path("ws/campaigns/<int:campaign_id>/", LiveFeedConsumer.as_asgi()),
    re_path(r"", WebsocketDenier.as_asgi()),  # any other path: refused at the handshake
]


def _token_key(scope: dict[str, Any]) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, key = value.decode("latin1").partition(" ")
            if scheme.lower() == "token" and key.strip():
                return key.strip()
    values = parse_qs(scope.get("query_string", b"").decode("latin1")).get("token")
    return values[-1] if values else None


@database_sync_to_async
def _user_for_token(key: str) -> Any:
    token = Token.objects.select_related("user").filter(key=key).first()
    if token is None or not token.user.is_active:
        return AnonymousUser()
    return token.user


class TokenOrSessionAuthMiddleware(BaseMiddleware):
    """Sets scope["user"]: the token's user when a token is given, else the session's."""

    async def __call__(self, scope, receive, send):
        scope = dict(scope)
        key = _token_key(scope)
        scope["user"] = await (_user_for_token(key) if key is not None else get_user(scope))
        return await super().__call__(scope, receive, send)


def origin_checked(application: Any) -> Any:
    """Refuse a browser page from another site (cross-site WebSocket hijacking with the user's
    cookie): a handshake carrying an Origin must name one of ALLOWED_HOSTS. Browsers always send
    Origin; clients that are not browsers may omit it, as they hold their credentials themselves.
    """
    validated = AllowedHostsOriginValidator(application)

    async def check(scope, receive, send):
        if any(name == b"origin" for name, _ in scope.get("headers", ())):
            return await validated(scope, receive, send)
        return await application(scope, receive, send)

    return check


def websocket_application() -> Any:
    return origin_checked(
        SessionMiddlewareStack(TokenOrSessionAuthMiddleware(URLRouter(websocket_urlpatterns)))
    )
