"""Every answer under /api/ is JSON with a `code`: unknown paths, methods, oversized bodies,
crashes; ids too large for the database are a 404, never an overflow."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import path
from rest_framework.test import APIClient

import config.urls


def _json_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["code"] == code
    return body


@pytest.mark.parametrize(
    "url",
    [
        "/api/campaigns/null,null/",
        "/api/no-such-thing/",
        "/api/campaigns/1/checks/x/",
        "/api/campaigns/99999999999999999999999/",
        "/api/campaigns/9223372036854775808/checks/",
        "/api/campaigns/1/checks/18446744073709551616/",
    ],
)
def test_unmatched_paths_are_json_404(build_world, url):
    world = build_world("cofd")
    _json_error(world.client("gm").get(url), 404, "not_found")
    _json_error(Client().get(url), 404, "not_found")


def test_method_not_allowed_is_json_405(build_world):
    world = build_world("cofd")
    body = _json_error(world.client("gm").put(world.url("checks/")), 405, "method_not_allowed")
    assert "detail" in body


def test_a_body_over_the_limit_is_json_413(build_world, settings):
    world = build_world("cofd")
    big = b'{"label": "' + b"x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10) + b'"}'
    for url in (world.url("checks/"), "/api/auth/token/", "/api/campaigns/"):
        response = world.client("gm").generic("POST", url, big, content_type="application/json")
        _json_error(response, 413, "too_large")


def _boom(request):
    raise RuntimeError("a bug")


def test_a_crash_is_json_500_without_internals(db, settings):
    settings.DEBUG = False
    urls = type("U", (), {"urlpatterns": [path("api/boom/", _boom), *config.urls.urlpatterns]})
    settings.ROOT_URLCONF = urls
    client = APIClient(raise_request_exception=False)
    body = _json_error(client.get("/api/boom/"), 500, "server_error")
    assert "a bug" not in str(body) and "Traceback" not in str(body)


def test_pages_keep_their_html_404(db):
    response = Client().get("/campaigns/null/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


def test_a_nul_byte_in_a_url_is_400_not_a_database_error(build_world):
    world = build_world("cofd")
    gm = world.client("gm")
    _json_error(gm.get(world.url("events/?type=check.rolled%00")), 400, "invalid")
    page = Client()
    page.force_login(world.users["alice"])
    assert page.get("/join/abc%00def/").status_code == 400
    assert page.get("/campaigns/1%00/").status_code in (400, 404)
