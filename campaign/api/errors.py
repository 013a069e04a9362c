"""Turn service errors into HTTP answers that name the field: {"field": ["message"], "code": …}."""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from campaign.errors import DomainError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        return Response({exc.field: [exc.message], "code": exc.code}, status=exc.status)
    return drf_exception_handler(exc, context)
