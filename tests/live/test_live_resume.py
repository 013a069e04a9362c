"""Nothing is lost: a client reconnecting with `after=<seq>` gets every event it missed, in order,
once; events whose live message never reached the server (here: committed by this test process,
whose channel layer is not the server's, exactly like a message the layer dropped) are filled in
from the log before the next live event, on the client's ping, or by the server's heartbeat."""

from __future__ import annotations

import pytest

from campaign import services as campaign_services
from rolls.checks import services
from tests.live.conftest import head_of, in_db, rest_view

pytestmark = pytest.mark.django_db(transaction=True)


def roll_elsewhere(table, name: str, visibility: str = "public") -> int:
    """A roll committed outside the server: the server's layer never hears of it."""
    actor, request = table.users[name], table.roll(name, visibility)
    return services.check_roll(campaign=table.campaign, actor=actor, request=request).seq


async def test_reconnecting_after_a_seq_delivers_every_missed_event_in_order_once(
    server, table, feeds
):
    gm = await feeds.open(server.url(table.id), table.tokens["gm"])
    alice = await feeds.open(server.url(table.id, after=0), table.tokens["alice"])
    seen = alice.seqs[-1]
    assert alice.seqs == list(range(1, seen + 1))  # after=0: the whole log so far
    await alice.close()

    # While alice is away: rolls through the server, and some it never hears about live.
    await gm.command("roll", request=table.roll("gm", "blind"))
    await in_db(roll_elsewhere, table, "boris", "private")
    await in_db(roll_elsewhere, table, "alice", "private")
    await gm.command("roll", request=table.roll("gm"))
    head = await in_db(head_of, table.id)

    alice = await feeds.open(server.url(table.id, after=seen), table.tokens["alice"])
    assert alice.seqs == list(range(seen + 1, head + 1))
    assert alice.frames[-1] == {"type": "caught_up", "head": head}
    assert alice.events == await in_db(rest_view, table.id, table.users["alice"], after=seen)

    live = (await gm.command("roll", request=table.roll("gm")))["data"]["seq"]
    await alice.through(live)
    assert alice.seqs == list(range(seen + 1, live + 1))
    assert await alice.quiet() == []


async def test_events_the_layer_never_delivered_are_filled_in_before_the_next_live_one(
    server, table, feeds
):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    boris = await feeds.open(server.url(table.id), table.tokens["boris"])
    start = alice.frames[-1]["head"]
    for visibility in ("public", "private", "blind"):
        await in_db(roll_elsewhere, table, "boris", visibility)
    live = (await boris.command("roll", request=table.roll("boris")))["data"]["seq"]

    for name, feed in (("alice", alice), ("boris", boris)):
        await feed.through(live)
        assert feed.seqs == list(range(start + 1, live + 1)), name
        assert feed.events == await in_db(rest_view, table.id, table.users[name], after=start)
        assert await feed.quiet() == []


async def test_a_lost_tail_arrives_when_the_client_pings(server, table, feeds):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    start = alice.frames[-1]["head"]
    await in_db(roll_elsewhere, table, "alice", "private")
    await in_db(roll_elsewhere, table, "gm", "blind")
    head = await in_db(head_of, table.id)

    pong = await alice.command("ping")
    assert pong["head"] == head
    assert alice.seqs == list(range(start + 1, head + 1))
    assert alice.events == await in_db(rest_view, table.id, table.users["alice"], after=start)


async def test_the_heartbeat_delivers_a_lost_tail_without_being_asked(start_servers, table, feeds):
    [server] = start_servers("beating", heartbeat=0.3)
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    start = alice.frames[-1]["head"]
    await in_db(roll_elsewhere, table, "boris", "public")
    await in_db(campaign_services.start_scene, campaign=table.campaign, actor=table.users["gm"])
    head = await in_db(head_of, table.id)

    await alice.through(head)  # no ping, no further event: the server notices by itself
    assert alice.seqs == list(range(start + 1, head + 1))


async def test_fetch_resends_a_range_and_resume_replays_from_a_seq(server, table, feeds):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    head = alice.frames[-1]["head"]
    reference = await in_db(rest_view, table.id, table.users["alice"], after=0)

    before = len(alice.events)
    answer = await alice.command("fetch", **{"from": 2, "to": 4})
    assert answer["data"] == {"from": 2, "to": 4}
    assert alice.events[before:] == reference[1:4]

    before = len(alice.events)
    answer = await alice.command("fetch", **{"from": head - 1, "to": head + 50})
    assert answer["data"] == {"from": head - 1, "to": head}  # clamped to the head
    assert alice.events[before:] == reference[head - 2 : head]

    before = len(alice.events)
    await alice.send({"type": "resume", "after": head - 3})
    caught_up = await alice.until(lambda frame: frame["type"] == "caught_up")
    assert caught_up["head"] == head
    assert alice.events[before:] == reference[head - 3 : head]

    error = await alice.command("fetch", **{"from": 5, "to": 3})
    assert (error["type"], error["field"]) == ("error", "to")
    error = await alice.command("resume", after=head + 10)
    assert (error["type"], error["field"]) == ("error", "after")
    assert await alice.quiet() == []
