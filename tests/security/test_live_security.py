"""The live feed as an attacker meets it: no long-lived secret in its URL, sockets that close at
sign-out and at revocation, an Origin check by scheme, host and port, and no frame or URL that
crashes or hangs a socket."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.live.conftest import WAIT, connect_raw, head_of, in_db, open_feed
from tests.live.test_live_auth import close_code, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)


async def _closed_with(feed) -> int:
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await feed.recv()
    return closed.value.rcvd.code


def _http(server) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=WAIT)


async def _ticket(server, token: str) -> str:
    async with _http(server) as http:
        answer = await http.post(
            "/api/auth/socket-ticket/", headers={"Authorization": f"Token {token}"}
        )
    assert answer.status_code == 201
    return answer.json()["ticket"]


async def test_a_token_in_the_url_opens_nothing_a_ticket_opens_one_socket_once(server, table):
    assert await close_code(server.url(table.id, token=table.tokens["alice"])) == 4401
    ticket = await _ticket(server, table.tokens["alice"])
    feed = await open_feed(server.url(table.id, ticket=ticket))
    rolled = await feed.command("roll", request=table.roll("alice"))
    assert rolled["type"] == "result"
    await feed.close()
    assert await close_code(server.url(table.id, ticket=ticket)) == 4401  # spent


async def test_signing_out_closes_the_sockets_opened_with_that_login(server, table):
    cookie = await in_db(session_cookie, table.users["alice"])
    origin = f"http://127.0.0.1:{server.port}"
    feed = await open_feed(server.url(table.id), headers={"Cookie": cookie}, origin=origin)
    ticket_feed = await open_feed(
        server.url(table.id, ticket=await _ticket(server, table.tokens["alice"]))
    )
    boris = await open_feed(server.url(table.id), table.tokens["boris"])
    async with _http(server) as http:
        http.headers["Cookie"] = cookie
        page = await http.get("/")
        csrf = page.cookies["csrftoken"]
        out = await http.post(
            "/accounts/logout/",
            headers={
                "X-CSRFToken": csrf,
                "Cookie": f"{cookie}; csrftoken={csrf}",
                "Origin": origin,
            },
        )
    assert out.status_code in (200, 302)
    assert await asyncio.wait_for(_closed_with(feed), WAIT) == 4401
    assert await asyncio.wait_for(_closed_with(ticket_feed), WAIT) == 4401
    # Nobody else is disturbed, and the old cookie opens nothing.
    assert (await boris.command("ping"))["type"] == "pong"
    assert await close_code(server.url(table.id), headers={"Cookie": cookie}, origin=origin) == 4401
    await boris.close()


async def test_revoking_the_token_closes_its_sockets(server, table):
    feed = await open_feed(
        server.url(table.id, ticket=await _ticket(server, table.tokens["boris"]))
    )
    async with _http(server) as http:
        answer = await http.delete(
            "/api/auth/token/", headers={"Authorization": f"Token {table.tokens['boris']}"}
        )
    assert answer.status_code == 204
    assert await asyncio.wait_for(_closed_with(feed), WAIT) == 4401
    assert await close_code(server.url(table.id), token=table.tokens["boris"]) == 4401


async def test_an_origin_on_another_port_or_scheme_is_refused(server, table):
    cookie = await in_db(session_cookie, table.users["alice"])
    own = f"http://127.0.0.1:{server.port}"
    for foreign in (
        f"http://127.0.0.1:{server.port + 1}",
        f"https://127.0.0.1:{server.port}",
        "http://127.0.0.1",
        "null",
    ):
        with pytest.raises(InvalidStatus) as refused:
            await connect_raw(server.url(table.id), headers={"Cookie": cookie}, origin=foreign)
        assert refused.value.response.status_code == 403, foreign
    feed = await open_feed(server.url(table.id), headers={"Cookie": cookie}, origin=own)
    await feed.close()


async def test_a_campaign_id_beyond_64_bits_is_refused_at_once(server, table):
    for huge in ("9223372036854775808", "1" * 40):
        url = server.url(table.id).replace(f"/{table.id}/", f"/{huge}/")
        with pytest.raises(InvalidStatus) as refused:
            await connect_raw(url, token=table.tokens["alice"])
        assert refused.value.response.status_code == 403


async def test_hostile_frames_get_error_frames_and_the_socket_stays_open(server, table, feeds):
    feed = await feeds.open(server.url(table.id), table.tokens["alice"])
    for frame in (
        "[" * 100_000,
        '{"type": "roll", "request": ' + '{"a": ' * 1000 + "1" + "}" * 1000 + "}",
        '{"type": "roll", "request": {"pool": NaN}}',
        '{"type": "roll", "request": {"label": "\\u0000"}}',
        '{"type": "fetch", "from": 1, "to": 99999999999999999999999}',
        '{"type": "roll", "request": {"helpers": [18446744073709551617]}}',
    ):
        await feed.send(frame)
        answer = await feed.until(lambda f: f["type"] == "error")
        assert answer["code"] in ("invalid", "too_large"), answer
    assert (await feed.command("ping"))["type"] == "pong"


async def test_a_lone_surrogate_is_refused_naming_the_field_and_the_socket_stays_open(
    server, table, feeds
):
    """A lone surrogate (the JSON escape "\\ud800", no UTF-8 can hold it) crashed the roll
    service: an error frame with code server_error."""
    feed = await feeds.open(server.url(table.id), table.tokens["alice"])
    head = await in_db(head_of, table.id)
    lone = "\ud800"
    for request, field in (
        (table.roll("alice", label=f"x{lone}"), "request.label"),
        (table.roll("alice", traits=["Wits", f"Occult{lone}"]), "request.traits.1"),
        ({**table.roll("alice"), lone: 1}, "request"),
    ):
        answer = await feed.command("roll", request=request, request_id="r-1")
        assert (answer["type"], answer["code"], answer["field"]) == ("error", "invalid", field)
    assert (await feed.command("ping"))["type"] == "pong"
    assert await in_db(head_of, table.id) == head


async def test_a_flood_of_frames_is_throttled_and_the_socket_stays_open(server, table, feeds):
    feed = await feeds.open(server.url(table.id), table.tokens["alice"])
    for n in range(200):
        await feed.send({"type": "ping", "ref": f"flood{n}"})
    answers = [
        await feed.until(lambda f: str(f.get("ref", "")).startswith("flood")) for _ in range(200)
    ]
    throttled = [a for a in answers if a["type"] == "error"]
    assert throttled and all(a["code"] == "throttled" for a in throttled)
    assert all(a["retry_after"] > 0 for a in throttled)
    await asyncio.sleep(2)
    assert (await feed.command("ping"))["type"] == "pong"
