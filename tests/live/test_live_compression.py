"""The sockets are served by config.websocket's protocol (every command that serves the app
names it): permessage-deflate in the 16 KiB window it announces, which the client inflates; a
client that offers no compression is sent plain frames."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from rolls.checks import services as rolls

pytestmark = pytest.mark.django_db(transaction=True)


def _play(table, times: int) -> None:
    gm = get_user_model().objects.get(username=table.users["gm"].username)
    for _ in range(times):
        rolls.check_roll(campaign=table.campaign, actor=gm, request=table.roll("gm"))


async def test_the_server_compresses_in_the_window_it_announces(server, table, feeds):
    from tests.live.conftest import in_db

    await in_db(_play, table, 30)
    feed = await feeds.open(server.url(table.id, after=0), table.tokens["alice"])
    extensions = feed.ws.response.headers["Sec-WebSocket-Extensions"]
    assert extensions.startswith("permessage-deflate"), extensions
    assert "server_max_window_bits=14" in extensions, extensions
    assert len(feed.events) >= 30  # every frame inflated with that window


async def test_a_client_without_compression_is_sent_plain_frames(server, table, feeds):
    from tests.live.conftest import in_db

    await in_db(_play, table, 3)
    feed = await feeds.open(server.url(table.id, after=0), table.tokens["alice"], compression=None)
    assert "Sec-WebSocket-Extensions" not in feed.ws.response.headers
    assert len(feed.events) >= 3
