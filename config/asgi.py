"""ASGI entry point: HTTP through Django, WebSockets (the live feed) through Channels."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from config.sharing import warn_if_sqlite_is_shared  # noqa: E402

warn_if_sqlite_is_shared()

from channels.routing import ProtocolTypeRouter  # noqa: E402

from rolls.live.broadcast import serving  # noqa: E402
from rolls.live.routing import websocket_application  # noqa: E402

application = serving(
    ProtocolTypeRouter({"http": django_asgi_app, "websocket": websocket_application()})
)

from config.startup import settle  # noqa: E402

settle()
