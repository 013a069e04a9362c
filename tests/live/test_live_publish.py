"""Publishing after a commit made outside a server (a command, a test): every event reaches the
channel layer, also from a thread that runs an event loop of its own."""

from __future__ import annotations

import asyncio
import logging

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection

from rolls.checks import services
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
