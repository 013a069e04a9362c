"""Turn service errors into HTTP answers that name the field: {"field": ["message"], "code": …}."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from rest_framework import exceptions
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
    # Django's own (get_object_or_404, PermissionDenied) as DRF's, so they get a `code` too; the
    # 404's message is DRF's translated one, not the model's name in English.
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        response.data = {**flat_errors(response.data), "code": "invalid"}
    elif isinstance(exc, APIException) and isinstance(response.data, dict):
        response.data = {**response.data, "code": exc.default_code}
    return response


def flat_errors(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """A serializer's errors as the API names fields everywhere: one key per field, dotted for
    nested fields and list items (``request.traits``, ``modifiers.0.value``), each with its
    messages."""
    if isinstance(detail, dict):
        flat: dict[str, list[str]] = {}
        for key, value in detail.items():
            flat.update(flat_errors(value, f"{prefix}{key}."))
        return flat
    if isinstance(detail, list) and any(isinstance(item, dict | list) for item in detail):
        flat = {}
        for index, item in enumerate(detail):
            if item:
                flat.update(flat_errors(item, f"{prefix}{index}."))
        return flat
    messages = detail if isinstance(detail, list) else [detail]
    return {prefix.rstrip(".") or "non_field_errors": [str(message) for message in messages]}
