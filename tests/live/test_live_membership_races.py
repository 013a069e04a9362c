"""A socket renders what it sends for the membership it holds, so it must never hold one older
than the events it sends: a change of this member's role, or their removal, committed while the
socket connects (between reading the membership and reading the head), or skipped over by a
`fetch` or `resume` whose live message was lost, is read before anything is rendered after it.
Otherwise a GM demoted to player kept being sent blind rolls in full, and a removed member kept
the feed (found in review, 2026-12-04).

In process (asgiref's communicator), so that a change can be committed inside the connect."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.testing import ApplicationCommunicator

from campaign import services as campaign_services
from campaign.models import Campaign, Membership
from rolls.checks import services as rolls
from rolls.live import broadcast, catchup, consumers
from rolls.live.consumers import CLOSE_NOT_A_MEMBER
from rolls.reads.selectors import events_for
from tests.live.conftest import in_db

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    catchup.forget()
    consumers._heads.clear()
    yield
    catchup.forget()
    consumers._heads.clear()


@pytest.fixture
def live_lost(monkeypatch) -> None:
    """Every live message lost, as the layer may lose any: only the log delivers."""
    monkeypatch.setattr(broadcast._Publisher, "submit", classmethod(lambda cls, item: False))
    monkeypatch.setattr(broadcast, "messages_for", lambda event: [])


class Socket:
    def __init__(self, campaign_id: int, token: str, after: int | None = None) -> None:
        from config.asgi import application

        scope = {
            "type": "websocket",
            "path": f"/ws/campaigns/{campaign_id}/",
            "query_string": b"" if after is None else f"after={after}".encode(),
            "headers": [(b"host", b"localhost"), (b"authorization", f"Token {token}".encode())],
            "subprotocols": [],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }
        self.app = ApplicationCommunicator(application, scope)
        self.frames: list[dict] = []
        self.closed: int | None = None

    async def connect(self) -> dict:
        await self.app.send_input({"type": "websocket.connect"})
        return await self.until(lambda frame: frame["type"] in ("caught_up", "closed"))

    async def until(self, done: Callable[[dict], bool]) -> dict:
        while True:
            message = await self.app.receive_output(timeout=15)
            if message["type"] == "websocket.accept":
                continue
            if message["type"] == "websocket.close":
                self.closed = message.get("code")
                return {"type": "closed", "code": self.closed}
            frame = json.loads(message["text"])
            self.frames.append(frame)
            if done(frame):
                return frame

    async def fetch(self, seq: int) -> list[dict]:
        """The events a `fetch` of one seq sends."""
        frame = {"type": "fetch", "ref": f"fetch-{seq}", "from": seq, "to": seq}
        await self.app.send_input({"type": "websocket.receive", "text": json.dumps(frame)})
        start = len(self.frames)
        await self.until(lambda got: got.get("ref") == frame["ref"])
        return [event for got in self.frames[start:] for event in got.get("events", ())]

    async def resume(self, after: int) -> list[dict]:
        """The events a `resume` after ``after`` sends, up to its `caught_up`."""
        frame = {"type": "resume", "after": after}
        await self.app.send_input({"type": "websocket.receive", "text": json.dumps(frame)})
        start = len(self.frames)
        await self.until(lambda got: got["type"] == "caught_up")
        return [event for got in self.frames[start:] for event in got.get("events", ())]

    async def close(self) -> None:
        if self.closed is None:
            await self.app.send_input({"type": "websocket.disconnect", "code": 1000})
        await self.app.wait(timeout=5)


def _second_gm(table: Any) -> Any:
    stranger = table.users["stranger"]
    campaign_services.join_campaign(invite_code=table.campaign.invite_code, user=stranger)
    campaign_services.change_role(
        campaign=table.campaign, actor=table.users["gm"], user_id=stranger.pk, role="gm"
    )
    return stranger


def _while_connecting(monkeypatch, user_id: int, change: Callable[[], Any]) -> None:
    """Commit ``change`` just after the connecting socket has read the user's membership."""
    real = consumers.membership_of

    def read_then_change(campaign_id: int, user: Any) -> Membership | None:
        found = real(campaign_id, user)
        monkeypatch.setattr(consumers, "membership_of", real)
        change()
        return found

    monkeypatch.setattr(consumers, "membership_of", read_then_change)


def _rest_shows(campaign_id: int, user: Any, seq: int) -> dict:
    membership = Membership.objects.get(campaign_id=campaign_id, user=user)
    return next(e for e in events_for(membership=membership, after=seq - 1, limit=1))


def _blind_roll(table: Any) -> int:
    request = table.roll("gm", "blind")
    return rolls.check_roll(campaign=table.campaign, actor=table.users["gm"], request=request).seq


@pytest.mark.parametrize("lost", [True, False], ids=["live lost", "live"])
async def test_a_gm_demoted_while_the_socket_connects_is_sent_what_a_player_sees(
    table, monkeypatch, request, lost
):
    if lost:
        request.getfixturevalue("live_lost")
    stranger = await in_db(_second_gm, table)
    demote = lambda: campaign_services.change_role(  # noqa: E731
        campaign=table.campaign, actor=table.users["gm"], user_id=stranger.pk, role="player"
    )
    _while_connecting(monkeypatch, stranger.pk, demote)
    socket = Socket(table.id, table.tokens["stranger"])
    assert (await socket.connect())["type"] == "caught_up"
    seq = await in_db(_blind_roll, table)
    if lost:
        (shown,) = await socket.fetch(seq)
    else:
        live = await socket.until(lambda f: f["type"] == "event" and f["event"]["seq"] == seq)
        shown = live["event"]
    rest = await in_db(_rest_shows, table.id, stranger, seq)
    assert rest["redacted"] and shown == rest
    assert not [frame for frame in socket.frames if frame["type"] == "presence"]  # GMs' only
    await socket.close()


async def test_a_member_removed_while_the_socket_connects_is_refused(table, monkeypatch):
    boris = table.users["boris"]
    remove = lambda: campaign_services.leave_campaign(  # noqa: E731
        campaign=table.campaign, actor=table.users["gm"], user_id=boris.pk
    )
    _while_connecting(monkeypatch, boris.pk, remove)
    socket = Socket(table.id, table.tokens["boris"])
    assert await socket.connect() == {"type": "closed", "code": CLOSE_NOT_A_MEMBER}
    assert not [frame for frame in socket.frames if frame["type"] in ("events", "event")]
    await socket.close()


async def test_a_fetch_past_the_members_own_lost_demotion_is_sent_what_a_player_sees(
    table, live_lost
):
    stranger = await in_db(_second_gm, table)
    head = await in_db(lambda: Campaign.objects.get(pk=table.id).head_seq)
    socket = Socket(table.id, table.tokens["stranger"], after=head)
    await socket.connect()
    await in_db(  # its live message is lost, and the fetch below starts after it
        campaign_services.change_role,
        campaign=table.campaign,
        actor=table.users["gm"],
        user_id=stranger.pk,
        role="player",
    )
    seq = await in_db(_blind_roll, table)
    (shown,) = await socket.fetch(seq)
    rest = await in_db(_rest_shows, table.id, stranger, seq)
    assert rest["redacted"] and shown == rest
    # And the gaps the socket repairs from the log later are rendered for a player too.
    later = await in_db(_blind_roll, table)
    (repaired,) = await socket.fetch(later)
    assert repaired == await in_db(_rest_shows, table.id, stranger, later)
    await socket.close()


async def test_a_removal_skipped_by_a_fetch_closes_the_socket(table, live_lost):
    boris = table.users["boris"]
    head = await in_db(lambda: Campaign.objects.get(pk=table.id).head_seq)
    socket = Socket(table.id, table.tokens["boris"], after=head)
    await socket.connect()
    await in_db(
        campaign_services.leave_campaign,
        campaign=table.campaign,
        actor=table.users["gm"],
        user_id=boris.pk,
    )
    seq = await in_db(_blind_roll, table)
    frame = {"type": "fetch", "ref": "after-removal", "from": seq, "to": seq}
    await socket.app.send_input({"type": "websocket.receive", "text": json.dumps(frame)})
    assert await socket.until(lambda got: False) == {"type": "closed", "code": CLOSE_NOT_A_MEMBER}
    assert not [f for f in socket.frames if f["type"] in ("events", "event")]
    await socket.close()


async def test_a_resume_past_the_members_own_lost_demotion_is_sent_what_a_player_sees(
    table, live_lost
):
    stranger = await in_db(_second_gm, table)
    head = await in_db(lambda: Campaign.objects.get(pk=table.id).head_seq)
    socket = Socket(table.id, table.tokens["stranger"], after=head)
    await socket.connect()
    await in_db(
        campaign_services.change_role,
        campaign=table.campaign,
        actor=table.users["gm"],
        user_id=stranger.pk,
        role="player",
    )
    seq = await in_db(_blind_roll, table)
    (shown,) = await socket.resume(seq - 1)
    rest = await in_db(_rest_shows, table.id, stranger, seq)
    assert rest["redacted"] and shown == rest
    await socket.close()
