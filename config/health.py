"""Health and failure handling: is the app able to serve, and a clean 503 when it is not.

/health/ answers within a second either way: the database is probed on a fresh connection (not
the pool, which a busy campaign may have drained) and the channel layer with a short timeout.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse

from config import outage

logger = logging.getLogger("config.health")
LAYER_SECONDS = 0.8


async def _channel_layer_ok() -> bool:
    layer = get_channel_layer()
    if layer is None:
        return False
    channel = f"health.{uuid.uuid4().hex}"
    try:
        async with asyncio.timeout(LAYER_SECONDS):
            await layer.send(channel, {"type": "health.ping"})
            message = await layer.receive(channel)
        return message.get("type") == "health.ping"
    except Exception:  # any layer failure means "not healthy", reported below
        logger.warning("channel layer health check failed", exc_info=True)
        return False


async def health(request: HttpRequest) -> JsonResponse:
    """200 when the database and the channel layer answer, 503 (naming the failing part) if not."""
    database, channel_layer = await asyncio.gather(
        sync_to_async(outage.database_answers, thread_sensitive=False)(),
        _channel_layer_ok(),
    )
    checks = {"database": database, "channel_layer": channel_layer}
    healthy = all(checks.values())
    body = {"status": "ok" if healthy else "unavailable"}
    body.update({name: "ok" if ok else "unavailable" for name, ok in checks.items()})
    return JsonResponse(body, status=200 if healthy else 503)


def refusal_response(refusal: outage.Refusal) -> JsonResponse:
    return JsonResponse(
        {"detail": str(refusal.message), "code": refusal.code},
        status=503,
        headers={"Retry-After": str(refusal.retry_after)},
    )


class DatabaseUnavailableMiddleware:
    """A database that is down, busy or out of connections answers a JSON 503 with Retry-After
    and a `code` saying which (config/outage.py), never a 500 or an HTML page. While the database
    is known down, requests are answered at once instead of each waiting for a connection."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path != "/health/" and outage.known_down():
            return refusal_response(outage.UNAVAILABLE)
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        refusal = outage.refusal_for(exception)
        if refusal is None:
            return None
        log = logger.warning if refusal is outage.BUSY else logger.error
        log("database %s: %s", refusal.code, exception)
        if refusal is not outage.BUSY:
            connection.close()  # drop a broken connection so the next request reconnects
        return refusal_response(refusal)
