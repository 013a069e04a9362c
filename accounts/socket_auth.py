"""The WebSocket handshake's checks: where the page comes from, then who the user is.

Origin: a handshake that carries one (browsers always do) must name the server's own origin
(scheme, host and port, as the browser reached it), or one of ALLOWED_ORIGINS or
CSRF_TRUSTED_ORIGINS; a page on another port or scheme of the same host is another site.

Who: a socket ticket (``?ticket=``, single use, a minute: POST /api/auth/socket-ticket/), else an
``Authorization: Token <key>`` header (clients that can set headers; read as the REST API reads
it), else the session cookie. A long-lived token in the URL is refused (it would end up in access
logs): the user stays anonymous and the consumer closes with 4401.

The sign-in's database reads run on the event loop's thread pool, not on the one thread that
Channels' database calls share by default (thread-sensitive: every socket of the process queues
there, its writes included), so that sign-ins do not wait behind other sockets' work.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

from channels.auth import get_user
from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http.request import split_domain_port, validate_host
from rest_framework.exceptions import AuthenticationFailed

from accounts.authentication import TokenAuthentication
from accounts.tickets import spend_ticket

DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(value: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin, or None if it is not one (e.g. "null")."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme]


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin1")
    return None


def own_origin(scope: dict[str, Any]) -> tuple[str, str, int] | None:
    """The origin the browser reached this server at: the Host header, with the socket's scheme
    (or the proxy's X-Forwarded-Proto where TRUST_X_FORWARDED_PROTO says to trust it)."""
    host = _header(scope, b"host")
    if not host:
        return None
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return None
    secure = scope.get("scheme") == "wss"
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy and (forwarded := _header(scope, b"x-forwarded-proto")) is not None:
        secure = forwarded.split(",")[0].strip().lower() == "https"
    return _origin(f"{'https' if secure else 'http'}://{host}")


def origin_allowed(scope: dict[str, Any]) -> bool:
    given = _header(scope, b"origin")
    if given is None:
        return True  # not a browser: such a client holds its credentials itself
    origin = _origin(given)
    configured = [*settings.ALLOWED_ORIGINS, *settings.CSRF_TRUSTED_ORIGINS]
    allowed = {own_origin(scope), *(_origin(value) for value in configured)} - {None}
    return origin is not None and origin in allowed


def origin_checked(application: Any) -> Any:
    denier = WebsocketDenier.as_asgi()

    async def check(scope, receive, send):
        if scope.get("type") == "websocket" and not origin_allowed(scope):
            return await denier(scope, receive, send)
        return await application(scope, receive, send)

    return check


def _credentials(scope: dict[str, Any]) -> tuple[str, str] | None:
    query = parse_qs(scope.get("query_string", b"").decode("latin1"))
    if "ticket" in query:
        return "ticket", query["ticket"][-1]
    if "token" in query:
        return "refused", ""
    scheme, _, key = (_header(scope, b"authorization") or "").partition(" ")
    if scheme.lower() == "token" and key.strip():
        return "token", key.strip()
    return None


def _user_for(kind: str, secret: str) -> Any:
    if kind == "ticket":
        return spend_ticket(secret) or AnonymousUser()
    if kind == "token":
        try:
            user, _token = TokenAuthentication().authenticate_credentials(secret)
        except AuthenticationFailed:
            return AnonymousUser()
        return user
    return AnonymousUser()


_signed_in = database_sync_to_async(_user_for, thread_sensitive=False)
# channels' get_user is that shared thread's; its function, off it (the session is this
# connection's alone: nothing else reads it meanwhile).
_session_user = database_sync_to_async(get_user.func, thread_sensitive=False)


class TicketOrSessionAuthMiddleware(BaseMiddleware):
    """Sets scope["user"]: a ticket's or a token header's user when one is given, else the
    session's."""

    async def __call__(self, scope, receive, send):
        scope = dict(scope)
        credentials = _credentials(scope)
        scope["user"] = await (
            _signed_in(*credentials) if credentials is not None else _session_user(scope)
        )
        return await super().__call__(scope, receive, send)
