"""Turn service errors into HTTP answers that name the field: {"field": ["message"], "code": …}."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import APIException, ParseError, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from campaign.errors import DomainError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        body = {field: [message] for field, message in exc.errors.items()}
        return Response({**body, "code": exc.code, **exc.details}, status=exc.status)
    if isinstance(exc, ParseError):
        return Response({"body": [str(exc.detail)], "code": "invalid"}, status=400)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        data = (
            response.data
            if isinstance(response.data, dict)
            else {"non_field_errors": response.data}
        )
        response.data = {**data, "code": "invalid"}
    elif isinstance(exc, APIException) and isinstance(response.data, dict):
        response.data = {**response.data, "code": exc.default_code}
    return response
