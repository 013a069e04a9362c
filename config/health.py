"""Health and failure handling: is the app able to serve, and a clean 503 when it is not."""

from __future__ import annotations

import asyncio
import logging
import uuid

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger("config.health")


def _database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except DatabaseError:
        connection.close()  # drop the broken connection so the next request reconnects
        return False


async def _channel_layer_ok() -> bool:
    layer = get_channel_layer()
    if layer is None:
        return False
    channel = f"health.{uuid.uuid4().hex}"
    try:
        async with asyncio.timeout(2):
            await layer.send(channel, {"type": "health.ping"})
            message = await layer.receive(channel)
        return message.get("type") == "health.ping"
    except Exception:  # any layer failure means "not healthy", reported below
        logger.warning("channel layer health check failed", exc_info=True)
        return False


async def health(request: HttpRequest) -> JsonResponse:
    """200 when the database and the channel layer answer, 503 (naming the failing part) if not."""
    checks = {
        "database": await sync_to_async(_database_ok)(),
        "channel_layer": await _channel_layer_ok(),
    }
    healthy = all(checks.values())
    body = {"status": "ok" if healthy else "unavailable"}
    body.update({name: "ok" if ok else "unavailable" for name, ok in checks.items()})
    return JsonResponse(body, status=200 if healthy else 503)


class DatabaseUnavailableMiddleware:
    """A database outage answers 503 with a message instead of a 500 and a traceback."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not _is_outage(exception):
            return None
        logger.error("database unavailable: %s", exception)
        connection.close()
        return JsonResponse(
            {"detail": "the database is unavailable; try again in a moment", "code": "unavailable"},
            status=503,
            headers={"Retry-After": "5"},
        )


def _is_outage(exception: Exception) -> bool:
    from django.db import InterfaceError, OperationalError

    return isinstance(exception, InterfaceError | OperationalError) and not _is_lock_timeout(
        exception
    )


def _is_lock_timeout(exception: Exception) -> bool:
    return "locked" in str(exception)  # SQLite busy: a real error worth a 500, not an outage
