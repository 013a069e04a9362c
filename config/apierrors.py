"""Every answer under /api/ is JSON with a `code`, whatever produced it (an unmatched path, a
method not allowed, a body too large, a crash); and no request reaches a view with a NUL
character in its path or query, which PostgreSQL cannot store or compare."""

from __future__ import annotations

import logging
from http import HTTPStatus

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse

logger = logging.getLogger("config.apierrors")

CODES = {
    400: "invalid",
    401: "not_authenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "too_large",
    415: "unsupported_media_type",
    429: "throttled",
    500: "server_error",
    503: "unavailable",
}


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")


def error_response(status: int, detail: str, code: str | None = None, **fields) -> JsonResponse:
    body = {**fields, "detail": detail, "code": code or CODES.get(status, "error")}
    return JsonResponse(body, status=status)


class ApiErrorsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" in request.path_info or any(
            "\x00" in key or "\x00" in value
            for key, values in request.GET.lists()
            for value in values
        ):
            if is_api(request):
                return error_response(400, "NUL characters are not allowed in URLs")
            return HttpResponseBadRequest("NUL characters are not allowed in URLs")
        if is_api(request):
            length = request.META.get("CONTENT_LENGTH") or "0"
            if length.isdigit() and int(length) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
                limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
                return error_response(413, f"request bodies are limited to {limit} bytes")
        response = self.get_response(request)
        if is_api(request) and response.status_code >= 400 and not _is_json(response):
            return _as_json(response)
        return response


def _is_json(response: HttpResponse) -> bool:
    return response.get("Content-Type", "").startswith("application/json")


def _as_json(response: HttpResponse) -> JsonResponse:
    status = response.status_code
    known = status in HTTPStatus._value2member_map_
    replaced = error_response(status, HTTPStatus(status).phrase.lower() if known else "error")
    for header in ("Allow", "Retry-After"):
        if header in response:
            replaced[header] = response[header]
    return replaced
