"""Over real sockets, each participant receives every event at once, and only what they may see:
public rolls in full, private rolls in full to the roller (and the GM), blind rolls to the GM
only; everyone else a redacted stub that keeps the seq. Exactly as the REST log shows them."""

from __future__ import annotations

import pytest

from tests.live.conftest import head_of, in_db, rest_view

pytestmark = pytest.mark.django_db(transaction=True)

MEMBERS = ("gm", "alice", "boris", "olga")


async def test_public_private_and_blind_rolls_reach_exactly_the_sockets_that_may_see_them(
    server, table, feeds
):
    start = await in_db(head_of, table.id)
    feed = {name: await feeds.open(server.url(table.id), table.tokens[name]) for name in MEMBERS}

    rolled = {}
    for key, name, visibility in [
        ("alice public", "alice", "public"),
        ("alice private", "alice", "private"),
        ("alice blind", "alice", "blind"),
        ("boris private", "boris", "private"),
        ("gm blind", "gm", "blind"),
        ("gm public", "gm", "public"),  # the last one: every socket reads up to it
    ]:
        answer = await feed[name].command("roll", request=table.roll(name, visibility))
        assert answer["type"] == "result", answer
        rolled[key] = answer["data"]["seq"]
    last = rolled["gm public"]

    for name in MEMBERS:
        events = await feed[name].through(last)
        assert [e["seq"] for e in events] == list(range(start + 1, last + 1)), name
        reference = await in_db(rest_view, table.id, table.users[name], after=start)
        assert events == reference, f"{name}'s socket differs from the REST log"
        # Nothing else: no frame but events and answers (and, for the GM, presence) arrived,
        # and nothing follows.
        expected = {"caught_up", "result", "presence"} if name == "gm" else {"caught_up", "result"}
        assert {f["type"] for f in feed[name].others()} <= expected, name
        assert [f for f in await feed[name].quiet() if f["type"] != "presence"] == [], name

    def shown(name: str, key: str) -> dict:
        return next(e for e in feed[name].events if e["seq"] == rolled[key])

    for name in MEMBERS:  # public: everyone, in full
        assert shown(name, "alice public")["payload"]["rolls"][0]["faces"] == [1, 2, 3, 4, 5]
    for key in rolled:  # the GM sees everything
        assert not shown("gm", key)["redacted"]
    assert not shown("alice", "alice private")["redacted"]
    assert not shown("boris", "boris private")["redacted"]
    for name, key in [
        ("alice", "alice blind"),  # blind: not even the roller
        ("alice", "boris private"),
        ("alice", "gm blind"),
        ("boris", "alice private"),
        ("boris", "alice blind"),
        ("olga", "alice private"),
        ("olga", "boris private"),
        ("olga", "gm blind"),
    ]:
        stub = shown(name, key)
        # The hash is shown (witnesses keep it) but covers a secret salt: no oracle (rolls.chain).
        assert stub["redacted"] and "payload" not in stub and "salt" not in repr(stub), (name, key)
    # No socket's bytes carry a hidden roll: the NPC's blind character id reaches the GM only.
    npc = str(table.characters["gm"].pk)
    for name in ("alice", "boris", "olga"):
        hidden = [e for e in feed[name].events if e["seq"] == rolled["gm blind"]]
        assert npc not in repr(hidden), name


async def test_a_revealed_roll_and_its_follow_ups_reach_everyone(server, table, feeds):
    gm = await feeds.open(server.url(table.id), table.tokens["gm"])
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    boris = await feeds.open(server.url(table.id), table.tokens["boris"])

    blind = (await alice.command("roll", request=table.roll("alice", "blind")))["data"]["seq"]
    reveal = await gm.command("reveal", seq=blind)
    assert reveal == {"type": "result", "ref": reveal["ref"], "data": {"check": blind}}
    # The follow-up keeps the roll's (blind) visibility; once revealed, everyone sees it in full.
    taken = await alice.command("dramatic_failure", seq=blind)
    assert taken["type"] == "result", taken
    head = await in_db(head_of, table.id)

    for feed in (gm, alice, boris):
        events = await feed.through(head)
        assert [e["type"] for e in events[-3:]] == [
            "check.rolled",
            "check.revealed",
            "check.dramatic_failure_taken",
        ]
        assert not events[-2]["redacted"] and events[-2]["payload"] == {"check_seq": blind}
        assert not events[-1]["redacted"] and events[-1]["payload"]["check_seq"] == blind
    assert alice.events[-3]["redacted"] and boris.events[-3]["redacted"]  # as it was sent
    assert not gm.events[-3]["redacted"]
