"""DRF's content negotiation with its answer remembered.

A client sends the same ``Accept`` header with every request, and the API's views offer the same
renderers, yet DRF parses the header and matches it anew each time (about 1 % of a check's
instructions). The answer depends on nothing else (the ``?format=`` override or a format suffix,
the header, the renderers offered), so it is worked out once per combination by DRF's own code
and remembered (for a header of up to LONGEST_REMEMBERED characters, 256 combinations at most);
a request DRF would refuse (406, or 404 for an unknown format) is left to DRF. The renderers are
told apart by their classes: the API's views configure them by class (`renderer_classes`), and
none overrides `get_renderers` with instances set up otherwise.
"""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from django.http import Http404
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

LONGEST_REMEMBERED = 512  # characters of an Accept header: what browsers and clients send


class RememberedNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: list[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        wanted = format_suffix or request.query_params.get(self.settings.URL_FORMAT_OVERRIDE)
        accept = request.META.get("HTTP_ACCEPT", "*/*")
        choice = None
        if len(accept) <= LONGEST_REMEMBERED:
            classes = tuple(type(renderer) for renderer in renderers)
            choice = _choice(wanted or None, accept, classes)
        if choice is None:  # refused, or not remembered: DRF's own answer
            return super().select_renderer(request, renderers, format_suffix)
        at, media_type = choice
        return renderers[at], media_type


@lru_cache(maxsize=256)  # bounded: the header is the client's to vary
def _choice(
    wanted: str | None, accept: str, renderer_classes: tuple[type[BaseRenderer], ...]
) -> tuple[int, str] | None:
    """DRF's choice for this format, header and renderers: the chosen renderer's place among
    them and the media type; None where DRF refuses the request."""
    renderers = [renderer_class() for renderer_class in renderer_classes]
    asked: Any = SimpleNamespace(query_params={}, headers={"accept": accept})
    try:
        renderer, media_type = DefaultContentNegotiation().select_renderer(asked, renderers, wanted)
    except (NotAcceptable, Http404):
        return None
    return renderers.index(renderer), media_type
