"""The socket's Origin check compares scheme, host and port (accounts/socket_auth.py)."""

from __future__ import annotations

import pytest

from accounts.socket_auth import origin_allowed


def scope(origin: str | None, host: str = "table.lan:8000", scheme: str = "ws", **headers) -> dict:
    pairs = [(b"host", host.encode())]
    if origin is not None:
        pairs.append((b"origin", origin.encode()))
    pairs += [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
    return {"type": "websocket", "scheme": scheme, "headers": pairs}


@pytest.fixture(autouse=True)
def _hosts(settings):
    settings.ALLOWED_HOSTS = ["table.lan", "dice.example.org"]
    settings.ALLOWED_ORIGINS = ["https://dice.example.org"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://proxy.example.org:8443"]


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://table.lan:8000", True),  # the page's own origin
        ("HTTP://Table.LAN:8000", True),
        ("http://table.lan:8001", False),  # another port of the same host
        ("https://table.lan:8000", False),  # another scheme
        ("http://table.lan", False),  # port 80
        ("https://dice.example.org", True),  # ALLOWED_ORIGINS
        ("https://dice.example.org:443", True),
        ("http://dice.example.org", False),
        ("https://proxy.example.org:8443", True),  # CSRF_TRUSTED_ORIGINS
        ("https://proxy.example.org", False),
        ("http://evil.example", False),
        ("null", False),
        ("http://table.lan:99999", False),
        (None, True),  # not a browser
    ],
)
def test_origins(origin, allowed):
    assert origin_allowed(scope(origin)) is allowed


def test_a_host_outside_allowed_hosts_has_no_own_origin():
    assert not origin_allowed(scope("http://rebound.example:8000", host="rebound.example:8000"))


def test_wss_and_a_trusted_proxy_make_the_own_origin_https(settings):
    assert origin_allowed(scope("https://table.lan:8000", scheme="wss"))
    assert not origin_allowed(scope("https://table.lan", x_forwarded_proto="https"))
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert origin_allowed(scope("https://table.lan", host="table.lan", x_forwarded_proto="https"))
