"""The socket handshake's sign-in (ticket, token header, session cookie) does not queue on the one
thread that Channels' database calls share by default (asgiref's single-thread executor: every
socket of a process runs its thread-sensitive calls there, writes included), so a socket's slow
write does not hold up everyone else's sign-in. Sign-in by token is the REST API's own
(accounts.authentication): the exact key, nothing more."""

from __future__ import annotations

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token

from accounts.socket_auth import TicketOrSessionAuthMiddleware
from accounts.tickets import issue_ticket

pytestmark = pytest.mark.django_db(transaction=True)

GIVE_UP = 60  # seconds: only a hang reaches it


async def _signed_in(scope: dict):
    """The user the handshake's middleware signs in for ``scope``."""
    seen = {}

    async def inner(scope, receive, send):
        seen["user"] = scope["user"]

    await TicketOrSessionAuthMiddleware(inner)(scope, None, None)
    return seen["user"]


def _scope(headers: list[tuple[bytes, bytes]] = (), query: bytes = b"") -> dict:
    return {"type": "websocket", "path": "/ws/", "headers": list(headers), "query_string": query}


def _make() -> dict[str, str]:
    user = get_user_model().objects.create_user(username="alice", password="alice-password")
    client = Client()
    client.force_login(user)
    return {
        "token": Token.objects.create(user=user).key,
        "ticket": issue_ticket(user=user),
        "session": client.cookies["sessionid"].value,
    }


async def _session_scope(session_key: str) -> dict:
    from channels.sessions import SessionMiddleware

    captured = {}

    async def keep(scope, receive, send):
        captured.update(scope)

    scope = _scope([(b"cookie", f"sessionid={session_key}".encode())])
    scope["cookies"] = {"sessionid": session_key}
    await SessionMiddleware(keep)(scope, None, None)
    return captured


async def test_sign_in_does_not_wait_for_the_shared_database_thread():
    secrets = await database_sync_to_async(_make)()
    session_scope = await _session_scope(secrets["session"])
    release = threading.Event()
    busy = asyncio.ensure_future(sync_to_async(release.wait, thread_sensitive=True)())
    try:
        for scope in (
            _scope([(b"authorization", f"Token {secrets['token']}".encode())]),
            _scope(query=f"ticket={secrets['ticket']}".encode()),
            session_scope,
        ):
            user = await asyncio.wait_for(_signed_in(scope), GIVE_UP)
            assert user.is_authenticated and user.username == "alice"
    finally:
        release.set()
        await busy


async def test_a_token_header_signs_in_with_the_exact_key_only():
    secrets = await database_sync_to_async(_make)()
    for key in (secrets["token"] + "trailing", secrets["token"][:-1], "0" * 40):
        scope = _scope([(b"authorization", f"Token {key}".encode())])
        user = await asyncio.wait_for(_signed_in(scope), GIVE_UP)
        assert not user.is_authenticated, key
