"""A socket's write waits for its own campaign only. The live feed's database calls run on the
server loop's thread pool (rolls/live/consumers.py), not on the one thread that Channels' database
calls share by default, where a write held on one campaign's lock held up every socket of the
process: the other tables' rolls, even their connecting. A campaign's writes beyond its
WRITERS_PER_CAMPAIGN queue on the loop, holding neither a thread nor a connection.

The held-lock tests need PostgreSQL: a campaign's stream lock is a row lock there (SQLite has
one write lock for the whole file, which every campaign's write waits for)."""

from __future__ import annotations

import asyncio
import threading
import time

import psycopg
import pytest
from django.conf import settings

from rolls.live.broadcast import database_threads, serving
from rolls.models import Check
from tests.live.conftest import WAIT, Table, database_url, in_db

HELD = 8  # writes to the held campaign: more than the server's pool has threads (6 on 2 cores)
# Held writes wait this long for the lock before they are answered "busy": far longer than the
# test, so that they are all still waiting while the other campaign is served.
LOCK_TIMEOUT = 120


@pytest.fixture
def tables(make_table) -> tuple[Table, Table]:
    return make_table(), make_table()


def lock_waiters(db: psycopg.Connection) -> int:
    """Backends of the test database waiting for a lock."""
    return db.execute(
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE datname = current_database() AND wait_event_type = 'Lock'"
    ).fetchone()[0]


async def until_waiting(db: psycopg.Connection, count: int) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while (waiting := lock_waiters(db)) < count:
        assert loop.time() < deadline, f"writes waiting on the lock: {waiting}"
        await asyncio.sleep(0.05)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
async def test_a_write_held_on_its_campaigns_lock_holds_up_no_other_campaign(
    start_servers, tables, feeds
):
    held, free = tables
    [server] = start_servers("held", env={"DB_LOCK_TIMEOUT_SECONDS": str(LOCK_TIMEOUT)})
    writers = [
        (name, await feeds.open(server.url(held.id), held.tokens[name]))
        for name in ("alice", "boris") * (HELD // 2)
    ]
    player = await feeds.open(server.url(free.id), free.tokens["alice"])
    # Someone holds the held campaign's stream lock (a process frozen mid-transaction, a psql).
    holder = psycopg.connect(database_url())
    watcher = psycopg.connect(database_url(), autocommit=True)
    try:
        holder.execute("SELECT 1 FROM campaign_campaign WHERE id = %s FOR UPDATE", [held.id])
        for n, (name, feed) in enumerate(writers):
            await feed.send({"type": "roll", "ref": f"held-{n}", "request": held.roll(name)})
        # As many of its socket writes wait on the lock as REST's would: its writer slots.
        await until_waiting(watcher, settings.WRITERS_PER_CAMPAIGN)

        answer = await player.command("roll", request=free.roll("alice", label="elsewhere"))
        assert answer["type"] == "result", answer
        seq = answer["data"]["seq"]
        # Connecting (sign-in, membership, catch-up), too.
        late = await feeds.open(server.url(free.id, after=seq - 1), free.tokens["boris"])
        assert late.seqs == [seq]
        assert lock_waiters(watcher) == settings.WRITERS_PER_CAMPAIGN, "still held meanwhile"
    finally:
        holder.close()  # lets go of the lock
        watcher.close()
    answers = [
        await feed.until(lambda frame, ref=f"held-{n}": frame.get("ref") == ref)
        for n, (_, feed) in enumerate(writers)
    ]
    assert [answer["type"] for answer in answers] == ["result"] * HELD, answers
    seqs = sorted(answer["data"]["seq"] for answer in answers)
    assert len(set(seqs)) == HELD
    rolled = await in_db(lambda: list(Check.objects.filter(campaign_id=held.id).values_list("seq")))
    assert sorted(s for (s,) in rolled) == seqs


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
async def test_held_writes_are_answered_busy_within_one_lock_timeout(start_servers, tables, feeds):
    """Queueing for a turn and waiting for the lock share one budget, as REST's writes do: past
    it, every held write is answered `busy` (retry later), and the sockets stay open."""
    held, _ = tables
    [server] = start_servers("busy", env={"DB_LOCK_TIMEOUT_SECONDS": "1"})
    languages = ["ru"] + ["en"] * (HELD - 1)  # the first socket's page is in Russian
    writers = [
        (name, await feeds.open(server.url(held.id), held.tokens[name], headers=said_in))
        for name, said_in in zip(
            ("alice", "boris") * (HELD // 2),
            [{"Accept-Language": language} for language in languages],
            strict=True,
        )
    ]
    holder = psycopg.connect(database_url())
    try:
        holder.execute("SELECT 1 FROM campaign_campaign WHERE id = %s FOR UPDATE", [held.id])
        for n, (name, feed) in enumerate(writers):
            await feed.send({"type": "roll", "ref": f"held-{n}", "request": held.roll(name)})
        answers = [
            await feed.until(lambda frame, ref=f"held-{n}": frame.get("ref") == ref)
            for n, (_, feed) in enumerate(writers)
        ]
    finally:
        holder.close()
    assert {(answer["type"], answer["code"]) for answer in answers} == {("error", "busy")}
    assert all(answer["retry_after"] >= 1 for answer in answers)
    said = [answer["message"] for answer in answers]  # in the language of the socket's page
    assert said[0] == "кампания занята; повторите тот же запрос через мгновение"
    assert set(said[1:]) == {"this campaign is busy; try the same request again in a moment"}
    name, feed = writers[0]
    assert (await feed.command("roll", request=held.roll(name)))["type"] == "result"


def test_the_served_loop_runs_database_calls_on_no_more_threads_than_the_pool_has(monkeypatch):
    """Each call holds a pooled connection while it runs: one thread more than the pool has
    connections would wait for one (and be answered `busy` after DB_POOL_TIMEOUT_SECONDS). One
    connection stays for the webhook sender, one for the catch-up's reader."""
    options = settings.DATABASES["default"].get("OPTIONS", {})
    for size, threads in ((2, 1), (4, 2), (10_000, 32)):
        monkeypatch.setitem(
            settings.DATABASES["default"], "OPTIONS", {**options, "pool": {"max_size": size}}
        )
        assert database_threads() <= threads
    monkeypatch.setitem(
        settings.DATABASES["default"], "OPTIONS", {**options, "pool": {"max_size": 3}}
    )
    seen: set[int] = set()

    def call() -> None:  # as a socket's database call: on the loop's thread pool
        seen.add(threading.get_ident())
        time.sleep(0.01)

    async def app(scope, receive, send) -> None:
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(None, call) for _ in range(20)))

    asyncio.run(serving(app)({"type": "lifespan"}, None, None))
    assert 1 <= len(seen) <= 2
