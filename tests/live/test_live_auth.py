"""Who may open a campaign's feed: members, by socket ticket (query), API token (header) or
session cookie.
Others are told with a close code (4401: not authenticated, 4403: not a member or no such
campaign, alike); a page from another site is refused at the handshake."""

from __future__ import annotations

import asyncio

import pytest
from django.conf import settings
from django.test import Client
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.live.conftest import WAIT, connect_raw, in_db, open_feed

pytestmark = pytest.mark.django_db(transaction=True)


async def close_code(url: str, **kwargs) -> int:
    feed = await connect_raw(url, **kwargs)
    with pytest.raises(ConnectionClosed) as closed:
        await asyncio.wait_for(feed.ws.recv(), WAIT)
    assert feed.frames == []  # refused before a single event
    return closed.value.rcvd.code


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


async def test_refusals_carry_a_close_code_4401_or_4403(server, table):
    assert await close_code(server.url(table.id)) == 4401  # no credentials
    assert await close_code(server.url(table.id), token="not-a-token") == 4401
    assert await close_code(server.url(table.id, token="not-a-token")) == 4401
    # Not a member, or no such campaign: the same answer, so nothing is learnt.
    assert await close_code(server.url(table.id), token=table.tokens["stranger"]) == 4403
    assert await close_code(server.url(table.id + 1000), token=table.tokens["alice"]) == 4403


def _socket_ticket(user) -> str:
    from accounts.tickets import issue_ticket

    return issue_ticket(user=user)


async def test_a_ticket_in_the_query_a_token_header_and_the_session_cookie_all_work(server, table):
    by_query = await open_feed(
        server.url(table.id, ticket=await in_db(_socket_ticket, table.users["alice"]))
    )
    by_header = await open_feed(server.url(table.id), table.tokens["alice"])
    cookie = await in_db(session_cookie, table.users["boris"])
    origin = f"http://127.0.0.1:{server.port}"
    by_cookie = await open_feed(server.url(table.id), headers={"Cookie": cookie}, origin=origin)
    rolled = await by_cookie.command("roll", request=table.roll("boris"))
    assert rolled["type"] == "result"  # the cookie's user acts as boris
    for feed in (by_query, by_header, by_cookie):
        assert (await feed.through(rolled["data"]["seq"]))[-1]["actor"]["username"] == "boris"
        await feed.close()


async def test_a_page_from_another_site_and_unknown_paths_are_refused_at_the_handshake(
    server, table
):
    cookie = await in_db(session_cookie, table.users["alice"])
    with pytest.raises(InvalidStatus) as refused:
        await connect_raw(
            server.url(table.id), headers={"Cookie": cookie}, origin="https://evil.example"
        )
    assert refused.value.response.status_code == 403
    with pytest.raises(InvalidStatus) as refused:
        await connect_raw(server.url(table.id).replace("/campaigns/", "/campaign/"))
    assert refused.value.response.status_code == 403
