"""The sockets are served by config.websocket's protocol (every command that serves the app
names it): permessage-deflate in the 16 KiB window it announces, which the client inflates; a
client that offers no compression is sent plain frames. What the protocol's compressor (ISA-L,
not zlib) writes, any client's zlib reads with the window it was told."""

from __future__ import annotations

import random
import string

import pytest
from django.contrib.auth import get_user_model
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
from websockets.frames import Frame, Opcode

from config.websocket import WINDOW_BITS, deflate
from rolls.checks import services as rolls

served = pytest.mark.django_db(transaction=True)


def _play(table, times: int) -> None:
    gm = get_user_model().objects.get(username=table.users["gm"].username)
    for _ in range(times):
        rolls.check_roll(campaign=table.campaign, actor=gm, request=table.roll("gm"))


@served
async def test_the_server_compresses_in_the_window_it_announces(server, table, feeds):
    from tests.live.conftest import in_db

    await in_db(_play, table, 30)
    feed = await feeds.open(server.url(table.id, after=0), table.tokens["alice"])
    extensions = feed.ws.response.headers["Sec-WebSocket-Extensions"]
    assert extensions.startswith("permessage-deflate"), extensions
    assert "server_max_window_bits=14" in extensions, extensions
    assert len(feed.events) >= 30  # every frame inflated with that window


@served
async def test_a_client_without_compression_is_sent_plain_frames(server, table, feeds):
    from tests.live.conftest import in_db

    await in_db(_play, table, 3)
    feed = await feeds.open(server.url(table.id, after=0), table.tokens["alice"], compression=None)
    assert "Sec-WebSocket-Extensions" not in feed.ws.response.headers
    assert len(feed.events) >= 3


def _negotiated(client: ClientPerMessageDeflateFactory):
    """The extension the protocol's server side agrees to with ``client``'s offer, and the
    client's own side of it (what inflates the frames), as a handshake would make them."""
    response, server = deflate().process_request_params(client.get_request_params(), [])
    return server, client.process_response_params(response, [])


def _far_repeats() -> bytes:
    """Text that repeats only 20,000 characters back: beyond the announced 16 KiB window, so a
    compressor that reached further than it said would write what the client cannot read."""
    letters = random.Random(7).choices(string.ascii_lowercase, k=20_000)
    return "".join(letters).encode() * 4


@pytest.mark.parametrize(
    "offer",
    [
        # What a browser offers (Chrome, Firefox): the compressor is kept for the socket's life.
        ClientPerMessageDeflateFactory(client_max_window_bits=True),
        # What no browser asks for: a compressor per message (websockets' own zlib then).
        ClientPerMessageDeflateFactory(server_no_context_takeover=True),
    ],
    ids=["browser", "no-context-takeover"],
)
def test_every_frame_inflates_in_the_window_the_server_announced(offer):
    server, client = _negotiated(offer)
    assert server.local_max_window_bits == client.remote_max_window_bits == WINDOW_BITS
    text = _far_repeats()
    for _ in range(3):  # the compressor's state carries from one message to the next
        sent = server.encode(Frame(Opcode.TEXT, text))
        assert len(sent.data) < len(text) * 0.7  # compressed, not stored
        assert client.decode(sent).data == text
