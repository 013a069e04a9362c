"""The live feed's servers, table and clients, and the admin as a staff member uses it on one of
those servers (whose channel layer is its own, as the admin and the sockets share a Redis layer
in production)."""

from __future__ import annotations

import httpx
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from tests.live.conftest import (  # noqa: F401
    WAIT,
    Server,
    feeds,
    make_table,
    start_servers,
    table,
)


@pytest.fixture
def admin_server(start_servers) -> Server:  # noqa: F811
    """A server of this test's own: the shared one keeps the content types' ids it read (the
    admin's log names one), which a transactional test's flush renumbers."""
    [server] = start_servers("admin")
    return server


def staff_client() -> Client:
    root = get_user_model().objects.create_superuser("root", password="root-password")
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(root)
    return client


async def admin_post(on: Server, staff: Client, path: str, data: dict) -> httpx.Response:
    """POST an admin form to the server as `staff` (a signed-in test client) with its CSRF
    token, as the browser would."""
    origin = f"http://127.0.0.1:{on.port}"
    cookie = f"{settings.SESSION_COOKIE_NAME}={staff.cookies[settings.SESSION_COOKIE_NAME].value}"
    async with httpx.AsyncClient(base_url=origin, timeout=WAIT) as http:
        page = await http.get(path, headers={"Cookie": cookie})
        assert page.status_code == 200, path
        csrf = page.cookies["csrftoken"]
        return await http.post(
            path,
            data=data,
            headers={
                "Cookie": f"{cookie}; csrftoken={csrf}",
                "X-CSRFToken": csrf,
                "Origin": origin,
                "Referer": f"{origin}{path}",
            },
        )
