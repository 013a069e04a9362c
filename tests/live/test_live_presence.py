"""Presence (who is connected now, for the GM; not events) and membership changes that alter what
an open socket may see: a promotion, a demotion, a removal."""

from __future__ import annotations

import asyncio

import pytest
from websockets.exceptions import ConnectionClosed

from campaign import services as campaign_services
from tests.live.conftest import WAIT, in_db

pytestmark = pytest.mark.django_db(transaction=True)


def online(frame: dict) -> dict[str, int]:
    return {member["username"]: member["connections"] for member in frame["members"]}


async def test_the_gm_sees_who_is_connected_and_players_get_no_presence(server, table, feeds):
    gm = await feeds.open(server.url(table.id), table.tokens["gm"])
    presence = await gm.until(lambda f: f["type"] == "presence")
    assert online(presence) == {"gm": 1}
    assert presence["members"][0] == {
        "user_id": table.users["gm"].pk,
        "username": "gm",
        "role": "gm",
        "connections": 1,
    }

    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    assert online(await gm.until(lambda f: f["type"] == "presence")) == {"gm": 1, "alice": 1}
    phone = await feeds.open(server.url(table.id), table.tokens["alice"])
    assert online(await gm.until(lambda f: f["type"] == "presence")) == {"gm": 1, "alice": 2}
    olga = await feeds.open(server.url(table.id), table.tokens["olga"])
    last = await gm.until(lambda f: f["type"] == "presence")
    assert online(last) == {"gm": 1, "alice": 2, "olga": 1}
    assert [m["role"] for m in last["members"]] == ["player", "gm", "observer"]  # by username

    await alice.close()
    await phone.close()
    while online(last) != {"gm": 1, "olga": 1}:
        last = await gm.until(lambda f: f["type"] == "presence")
    assert olga.others() == [{"type": "caught_up", "head": olga.frames[0]["head"]}]
    assert await olga.quiet() == []


async def test_a_promoted_player_sees_blind_rolls_and_a_demoted_gm_no_longer_does(
    server, table, feeds
):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    boris = await feeds.open(server.url(table.id), table.tokens["boris"])
    gm, boris_id = table.users["gm"], table.users["boris"].pk

    # Committed outside the server, so boris's socket learns of it only from the log.
    promote = campaign_services.change_role
    await in_db(promote, campaign=table.campaign, actor=gm, user_id=boris_id, role="gm")
    first = (await alice.command("roll", request=table.roll("alice", "blind")))["data"]["seq"]
    second = (await alice.command("roll", request=table.roll("alice", "blind")))["data"]["seq"]
    events = await boris.through(second)
    assert events[-3]["type"] == "member.role_changed"
    assert not events[-2]["redacted"] and not events[-1]["redacted"]  # now a GM's view
    assert [e["seq"] for e in events[-2:]] == [first, second]

    await in_db(
        campaign_services.change_role,
        campaign=table.campaign,
        actor=gm,
        user_id=boris_id,
        role="player",
    )
    third = (await alice.command("roll", request=table.roll("alice", "blind")))["data"]["seq"]
    events = await boris.through(third)
    assert events[-2]["type"] == "member.role_changed"
    assert events[-1]["seq"] == third and events[-1]["redacted"]
    assert "payload" not in events[-1]


async def test_a_removed_member_gets_the_event_then_4403(server, table, feeds):
    gm = await feeds.open(server.url(table.id), table.tokens["gm"])
    boris = await feeds.open(server.url(table.id), table.tokens["boris"])
    await in_db(
        campaign_services.leave_campaign,
        campaign=table.campaign,
        actor=table.users["gm"],
        user_id=table.users["boris"].pk,
    )
    rolled = (await gm.command("roll", request=table.roll("gm")))["data"]["seq"]
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await asyncio.wait_for(boris.recv(), WAIT)
    assert closed.value.rcvd.code == 4403
    assert boris.events[-1]["type"] == "member.left"
    assert rolled not in boris.seqs  # nothing after the removal
