"""The answer to a locked-out login (django-axes calls this): 429 with Retry-After; JSON on the
API, the login page with a message otherwise."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _


def lockout_response(request: HttpRequest, *args: Any) -> HttpResponse:
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    message = _("Too many failed sign-ins. Try again in %(minutes)d minutes.") % {
        "minutes": max(1, seconds // 60)
    }
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": message, "code": "throttled"}, status=429)
    else:
        response = render(request, "registration/locked_out.html", {"message": message}, status=429)
    response["Retry-After"] = str(seconds)
    return response
