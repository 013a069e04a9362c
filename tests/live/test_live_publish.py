"""Publishing after a commit made outside a server (a command, a test): every event reaches the
channel layer, also from a thread that runs an event loop of its own."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection

from rolls.checks import services
from rolls.live import broadcast
from rolls.live.broadcast import group_all
from tests.live.conftest import WAIT

# Committed for real: the commit runs the listeners (and a connection made in another context
# than the test's would wait on the test's open transaction).
pytestmark = pytest.mark.django_db(transaction=True)


def _received(layer, channel: str) -> dict:
    """The next message on the channel (a bound on the wait: none at all is a failure)."""

    async def receive() -> dict:
        return await asyncio.wait_for(layer.receive(channel), WAIT)

    return async_to_sync(receive)()


def test_a_commit_in_a_thread_that_runs_an_event_loop_is_published(table, monkeypatch, caplog):
    """Playwright's sync API (browser tests) and async tests keep a loop running in the thread
    that commits; AsyncToSync refuses to run there, and the event used to go unpublished."""
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group_all(table.id), channel)
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # as the browser tests do

    async def commit_inside_a_running_loop() -> int:
        try:
            check = services.check_roll(
                campaign=table.campaign, actor=table.users["alice"], request=table.roll("alice")
            )
        finally:
            connection.close()  # this context's own connection
        return check.seq

    with caplog.at_level(logging.WARNING, logger="rolls.live"):
        seq = asyncio.run(commit_inside_a_running_loop())
    message = _received(layer, channel)
    assert message["seq"] == seq
    assert message["type"] == "feed.event"
    assert "not published" not in caplog.text


def test_a_commit_in_a_plain_thread_is_published(table):
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group_all(table.id), channel)
    check = services.check_roll(
        campaign=table.campaign, actor=table.users["alice"], request=table.roll("alice")
    )
    assert _received(layer, channel)["seq"] == check.seq


@pytest.mark.parametrize("queries_allowed_on_loops", [False, True])
def test_a_wsgi_publishing_loop_renders_on_its_own_thread_unless_the_render_queries(
    table, monkeypatch, queries_allowed_on_loops
):
    """config/wsgi.py's loop serves no socket: a check this process wrote is rendered on the
    loop's own thread (the thread pool's round trip cost more CPU than the render); a render that
    queries (the roster, read once per change) is refused there by Django before it queries, and
    runs on the thread pool. Both are published, in order. Where Django is told to allow queries
    on a loop's thread (DJANGO_ALLOW_ASYNC_UNSAFE) nothing would refuse them there: every render
    goes to the thread pool."""
    rendered_on: list[str] = []
    sent: list[int] = []
    render, send = broadcast.texts_to_each, broadcast._send

    def texts_to_each(*args, **kwargs):
        texts = render(*args, **kwargs)  # raises where it would query on the loop's thread
        rendered_on.append(threading.current_thread().name)
        return texts

    async def recorded_send(pairs):
        await send(pairs)
        sent.append(pairs[0][1]["seq"])

    monkeypatch.setattr(broadcast, "texts_to_each", texts_to_each)
    monkeypatch.setattr(broadcast, "_send", recorded_send)
    monkeypatch.setattr(broadcast._Publisher, "loop", None)  # restored after: no loop again
    monkeypatch.setattr(broadcast._Publisher, "renders_on_loop", False)
    if queries_allowed_on_loops:
        monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    else:
        monkeypatch.delenv("DJANGO_ALLOW_ASYNC_UNSAFE", raising=False)

    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group_all(table.id), channel)
    loop = broadcast.start_publishing_loop()  # as config/wsgi.py starts it
    try:
        broadcast.forget()  # the roster kept while the table was made: read again, once
        checks = [
            services.check_roll(
                campaign=table.campaign, actor=table.users["alice"], request=table.roll("alice")
            )
            for _ in range(2)
        ]
        deadline = time.monotonic() + WAIT
        while len(sent) < 2 and time.monotonic() < deadline:  # received once it is in the layer
            time.sleep(0.01)
        assert sent == [check.seq for check in checks]
        assert [_received(layer, channel)["seq"] for _ in checks] == sent
    finally:
        asyncio.run_coroutine_threadsafe(_stopped(broadcast._Publisher.task), loop).result(WAIT)
        loop.call_soon_threadsafe(loop.stop)
    on_loop = [name == "live-publish" for name in rendered_on]
    # The first read the roster: on the thread pool; the second, on the loop where it may.
    assert on_loop == [False, not queries_allowed_on_loops]


async def _stopped(task: asyncio.Task) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
