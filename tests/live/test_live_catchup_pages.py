"""Over a real socket: a catch-up of several pages, each next page read while the one before is
sent (#17), arrives whole and in order for every class of viewer, as the REST log shows it; a
socket that goes away in the middle leaves its page read ahead to nobody, without an error."""

from __future__ import annotations

import pytest

from rolls.checks import services
from rolls.live.catchup import PAGE
from tests.live.conftest import connect_raw, head_of, in_db, rest_view

pytestmark = pytest.mark.django_db(transaction=True)


async def test_pages_read_ahead_arrive_whole_and_in_order(server, table, feeds):
    def play() -> None:
        for n in range(PAGE + PAGE // 4):  # more than one page
            name = ("alice", "boris", "gm")[n % 3]
            visibility = ("public", "public", "private", "blind")[n % 4]
            request = table.roll(name, visibility)
            services.check_roll(campaign=table.campaign, actor=table.users[name], request=request)

    await in_db(play)
    head = await in_db(head_of, table.id)
    assert head > PAGE
    logged = len(server.log.read_bytes())

    gone = await connect_raw(server.url(table.id, after=0), table.tokens["gm"])
    while (await gone.recv())["type"] != "events":  # the first page; the next is being read
        pass
    await gone.close()

    for name in ("gm", "alice", "olga"):
        feed = await feeds.open(server.url(table.id, after=0), table.tokens[name])
        assert [e["seq"] for e in feed.events] == list(range(1, head + 1)), name
        assert feed.events == await in_db(rest_view, table.id, table.users[name], 0), name
        assert len([f for f in feed.frames if f["type"] == "events"]) >= 2
    said = server.log.read_bytes()[logged:].decode()
    assert "Traceback" not in said and "never retrieved" not in said, said
