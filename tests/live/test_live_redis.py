"""With Redis as the channel layer, several server processes serve one feed: a client on one sees
a roll made through the other, with the same visibility; and a Redis restart in the middle of a
session loses nothing — the sockets stay open and catch up from the log.

The servers here have their heartbeat off, so events can only arrive through Redis (or through the
repairs the consumers make from the log when Redis comes back). Each test has its own
redis-server, so that restarting it disturbs no other test.
"""

from __future__ import annotations

import pytest

from tests.live.conftest import head_of, in_db, rest_view

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]


def online(frame: dict) -> set[str]:
    return {member["username"] for member in frame["members"]}


@pytest.mark.postgres
async def test_two_server_processes_serve_one_feed(private_redis, start_servers, table, feeds):
    one, two = start_servers("one", "two", redis_url=private_redis.url)
    start = await in_db(head_of, table.id)
    gm = await feeds.open(one.url(table.id), table.tokens["gm"])
    boris = await feeds.open(one.url(table.id), table.tokens["boris"])
    alice = await feeds.open(two.url(table.id), table.tokens["alice"])
    olga = await feeds.open(two.url(table.id), table.tokens["olga"])
    # Presence spans the processes: the GM on one sees the players connected to two.
    presence = await gm.until(lambda f: f["type"] == "presence")
    while online(presence) != {"gm", "boris", "alice", "olga"}:
        presence = await gm.until(lambda f: f["type"] == "presence")

    rolled = {}
    for key, (feed, name, visibility) in {
        "alice public": (alice, "alice", "public"),  # through server two
        "alice private": (alice, "alice", "private"),
        "alice blind": (alice, "alice", "blind"),
        "boris private": (boris, "boris", "private"),  # through server one
        "gm blind": (gm, "gm", "blind"),
        "last": (alice, "alice", "public"),
    }.items():
        answer = await feed.command("roll", request=table.roll(name, visibility))
        rolled[key] = answer["data"]["seq"]

    for name, feed in {"gm": gm, "boris": boris, "alice": alice, "olga": olga}.items():
        await feed.through(rolled["last"])
        assert feed.seqs == list(range(start + 1, rolled["last"] + 1)), name
        assert feed.events == await in_db(rest_view, table.id, table.users[name], after=start)
        assert [f for f in await feed.quiet() if f["type"] != "presence"] == [], name

    def shown(feed, key: str) -> dict:
        return next(e for e in feed.events if e["seq"] == rolled[key])

    assert not shown(gm, "alice blind")["redacted"]  # made on two, seen in full on one
    assert shown(boris, "alice private")["redacted"]  # and only as a stub by boris
    assert not shown(alice, "alice private")["redacted"]
    assert shown(alice, "boris private")["redacted"]  # made on one, a stub on two
    assert shown(olga, "gm blind")["redacted"]


async def test_a_redis_restart_during_a_session_loses_nothing(
    private_redis, start_servers, table, feeds
):
    # INFO: a failure shows what each server's hub and sockets did (the logs, below).
    one, two = start_servers("one", "two", redis_url=private_redis.url, env={"LOG_LEVEL": "INFO"})
    start = await in_db(head_of, table.id)
    gm = await feeds.open(one.url(table.id), table.tokens["gm"])
    boris = await feeds.open(one.url(table.id), table.tokens["boris"])
    alice = await feeds.open(two.url(table.id), table.tokens["alice"])
    before = (await alice.command("roll", request=table.roll("alice")))["data"]["seq"]
    for feed in (gm, boris, alice):
        await feed.through(before)

    private_redis.stop()
    # Play goes on: the database is up, so commands work; nothing can be published meanwhile.
    during = [
        await alice.command("roll", request=table.roll("alice", "private")),
        await gm.command("roll", request=table.roll("gm", "blind")),
        await boris.command("roll", request=table.roll("boris")),
    ]
    assert [answer["type"] for answer in during] == ["result"] * 3, during
    # A socket opened during the outage is served from the log.
    olga = await feeds.open(two.url(table.id, after=before), table.tokens["olga"])
    assert olga.seqs == list(range(before + 1, during[-1]["data"]["seq"] + 1))

    private_redis.start()
    after = (await alice.command("roll", request=table.roll("alice")))["data"]["seq"]
    last = (await gm.command("roll", request=table.roll("gm")))["data"]["seq"]

    for name, feed in {"gm": gm, "boris": boris, "alice": alice, "olga": olga}.items():
        try:
            await feed.through(last)  # the same sockets, never closed
        except AssertionError as failure:
            logs = {server.log.name: server.log.read_text()[-4000:] for server in (one, two)}
            raise AssertionError(
                f"{name} (seqs {before}, {after}, {last}): {failure}\n{logs}"
            ) from None
        first = start + 1 if name != "olga" else before + 1
        assert feed.seqs == list(range(first, last + 1)), name
        reference = await in_db(rest_view, table.id, table.users[name], after=first - 1)
        assert feed.events == reference, name
        assert [f for f in await feed.quiet() if f["type"] != "presence"] == [], name
    assert after < last
