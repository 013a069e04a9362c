"""WebSocket routes and the handshake's checks: origin, then who the user is (both in
`accounts/socket_auth.py`; docs/websocket.md). A campaign id too long for the database is no route
(refused at the handshake), like any other path."""

from __future__ import annotations

from typing import Any

from channels.routing import URLRouter
from channels.security.websocket import WebsocketDenier
from channels.sessions import SessionMiddlewareStack
from django.urls import path, re_path

import config.converters  # noqa: F401  (registers <id:…>)
from accounts.socket_auth import TicketOrSessionAuthMiddleware, origin_checked
from rolls.live.consumers import LiveFeedConsumer

websocket_urlpatterns = [
    path("ws/campaigns/<id:campaign_id>/", LiveFeedConsumer.as_asgi()),
    re_path(r"", WebsocketDenier.as_asgi()),  # any other path: refused at the handshake
]


def websocket_application() -> Any:
    return origin_checked(
        SessionMiddlewareStack(TicketOrSessionAuthMiddleware(URLRouter(websocket_urlpatterns)))
    )
