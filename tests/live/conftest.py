"""The live feed's test kit: real uvicorn servers on loopback, sharing the test database (committed
rows, hence transactional tests), and real WebSocket clients.

A server started here uses the in-memory channel layer unless given a Redis URL; the Redis tests
start a private redis-server of their own, which they may restart without disturbing tests that
run at the same time on other workers (and whose campaign ids could collide in a shared Redis).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from rest_framework.authtoken.models import Token
from websockets.asyncio.client import ClientConnection, connect

from campaign import services as campaign_services
from campaign.models import Campaign, Character, Membership
from config.websocket import UVICORN_WS
from rolls.checks import services as rolls
from rolls.reads.selectors import events_for
from tests.faults.services import Redis as PrivateRedis  # one private redis-server for tests
from tests.rolls.trust.conftest import TRAITS, play  # noqa: F401 (a fixture)

ROOT = Path(__file__).resolve().parents[2]
WAIT = 15  # seconds: the bound on any single wait in these tests
SHEET = {"attributes": {"Wits": 3, "Strength": 2}, "skills": {"Occult": 2, "Brawl": 3}}
FAILURE, SUCCESS = [1, 2, 3, 4, 5], [8, 9, 8, 2, 1]
UNESCAPED = "Кости \U0001f3b2 del\x7f"  # not printable ASCII: the canonical text keeps it raw


# --- servers -------------------------------------------------------------------------------


def database_url() -> str:
    """The test database (pytest-django's, with the xdist suffix) as a DATABASE_URL."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    user = quote(settings.get("USER") or "", safe="")
    password = quote(settings.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else f"{user}@" if user else ""
    host, port = settings.get("HOST") or "127.0.0.1", settings.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{settings['NAME']}"


def _free_socket() -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(512)
    listener.set_inheritable(True)
    return listener


@dataclass
class Server:
    """`uvicorn config.asgi:application` in a child process, on a loopback socket it inherits."""

    log: Path
    redis_url: str | None = None
    heartbeat: float = 3600  # effectively off unless a test is about the heartbeat
    env: dict[str, str] = field(default_factory=dict)  # more settings, e.g. a lock timeout
    port: int = 0
    process: subprocess.Popen | None = None

    def start(self) -> Server:
        return self.spawn().wait()

    def spawn(self) -> Server:
        listener = _free_socket()
        self.port = listener.getsockname()[1]
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "LIVE_HEARTBEAT_SECONDS": str(self.heartbeat),
            "DEBUG": "0",
            "LOG_LEVEL": "WARNING",
            **self.env,
        }
        env.pop("REDIS_URL", None)
        if self.redis_url:
            env["REDIS_URL"] = self.redis_url
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    *(sys.executable, "-m", "uvicorn", "config.asgi:application", *UVICORN_WS),
                    *("--fd", str(listener.fileno()), "--log-level", "warning"),
                ],
                cwd=ROOT,
                env=env,
                pass_fds=[listener.fileno()],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        listener.close()
        return self

    def wait(self) -> Server:
        assert self.process is not None
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited:\n{self.log.read_text()}")
            try:
                httpx.get(f"http://127.0.0.1:{self.port}/health/", timeout=2)
                return self
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server did not start:\n{self.log.read_text()}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def url(self, campaign_id: int, **query: Any) -> str:
        suffix = f"?{urlencode(query)}" if query else ""
        return f"ws://127.0.0.1:{self.port}/ws/campaigns/{campaign_id}/{suffix}"


@pytest.fixture(scope="session")
def live_server_process(
    django_db_setup, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """One in-memory-layer server per test worker, shared by the tests that need no other."""
    server = Server(log=tmp_path_factory.mktemp("live") / "server.log").start()
    yield server
    server.stop()


@pytest.fixture
def server(live_server_process: Server, transactional_db) -> Server:
    return live_server_process


@pytest.fixture
def start_servers(transactional_db, tmp_path: Path) -> Iterator[Callable[..., list[Server]]]:
    """Start extra servers (a Redis URL, another heartbeat), side by side; stopped after the
    test. Request it after `private_redis`, so that Redis outlives the servers."""
    started: list[Server] = []

    def start(*names: str, **options: Any) -> list[Server]:
        servers = [Server(log=tmp_path / f"{name}.log", **options).spawn() for name in names]
        started.extend(servers)
        return [server.wait() for server in servers]

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    redis = PrivateRedis(directory=tmp_path).start()
    yield redis
    redis.stop()


# --- the table -----------------------------------------------------------------------------


@dataclass
class Table:
    campaign: Campaign
    users: dict[str, Any]
    tokens: dict[str, str]
    characters: dict[str, Character] = field(default_factory=dict)

    @property
    def id(self) -> int:
        return self.campaign.pk

    def roll(self, name: str, visibility: str = "public", **extra: Any) -> dict[str, Any]:
        """A check request for `name`'s character (the GM rolls for the NPC): Wits + Occult, five
        dice typed in (manual dice), a failure unless `faces` says otherwise."""
        character = self.characters[name]
        return {
            "character": str(character.pk),
            "traits": ["Wits", "Occult"],
            "visibility": visibility,
            "faces": FAILURE,
            **extra,
        }


@pytest.fixture
def make_table(make_campaign, users) -> Callable[[], Table]:
    """Tables as `table`'s, the same users (and tokens) at each."""

    def make() -> Table:
        campaign = make_campaign("cofd", {"manual_dice": True})
        gm = users["gm"]
        campaign_services.start_chapter(campaign=campaign, actor=gm)
        campaign_services.start_session(campaign=campaign, actor=gm)
        characters = {
            name: campaign_services.create_character(
                campaign=campaign, actor=users[name], name=f"{name}'s hero", traits=SHEET
            )
            for name in ("alice", "boris")
        }
        characters["gm"] = campaign_services.create_character(
            campaign=campaign, actor=gm, name="The NPC", traits=SHEET
        )
        tokens = {
            name: Token.objects.get_or_create(user=user)[0].key for name, user in users.items()
        }
        campaign.refresh_from_db()
        return Table(campaign=campaign, users=users, tokens=tokens, characters=characters)

    return make


@pytest.fixture
def table(make_table) -> Table:
    """A CofD campaign with manual dice (exact outcomes), an open session and chapter; characters
    for alice, boris and the GM's NPC; an API token for every member and for the stranger."""
    return make_table()


@dataclass
class HiddenPlay:
    """`play(system)`'s session left open, ended by hidden rolls (alice's blind one, her private
    one labelled UNESCAPED, the GM's private pool), then seen by every class of viewer: GMs, the
    owner of the rolls' character, another player, an observer, a late joiner, and a member
    removed (their membership as a socket last held it)."""

    campaign: Campaign
    viewers: list[Membership]
    gm: Any
    blind: int  # its seq

    def reveal(self) -> None:
        """The GM reveals the blind roll and the campaign's first private one."""
        private = self.campaign.checks.filter(visibility="private").order_by("seq").first()
        for seq in (self.blind, private.seq):
            rolls.reveal_check(campaign=self.campaign, actor=self.gm, seq=seq)


@pytest.fixture
def hidden_play(play, users) -> Callable[[str], HiddenPlay]:  # noqa: F811
    def make(system: str) -> HiddenPlay:
        campaign = play(system, end=False)
        gm, alice = users["gm"], users["alice"]
        hero = campaign.characters.get(name="Hero")
        mine = {"character": str(hero.pk), **TRAITS[system]}
        blind = rolls.check_roll(
            campaign=campaign, actor=alice, request={**mine, "visibility": "blind"}
        )
        labelled = {**mine, "label": UNESCAPED, "visibility": "private"}
        rolls.check_roll(campaign=campaign, actor=alice, request=labelled)
        rolls.check_roll(campaign=campaign, actor=gm, request={"pool": 2, "visibility": "private"})
        campaign_services.join_campaign(invite_code=campaign.invite_code, user=users["stranger"])
        boris = Membership.objects.get(campaign=campaign, user=users["boris"])
        campaign_services.leave_campaign(campaign=campaign, actor=gm, user_id=boris.user_id)
        viewers = [*Membership.objects.filter(campaign=campaign).order_by("user_id"), boris]
        assert {v.role for v in viewers} == {"gm", "player", "observer"}
        return HiddenPlay(campaign=campaign, viewers=viewers, gm=gm, blind=blind.seq)

    return make


async def in_db(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ORM code from an async test, closing the thread's connection after (PostgreSQL must
    be able to drop the test database at the end)."""

    def run() -> Any:
        try:
            return function(*args, **kwargs)
        finally:
            connection.close()

    return await sync_to_async(run)()


def rest_view(campaign_id: int, user: Any, after: int) -> list[dict[str, Any]]:
    """What the REST log (`events_for`) shows this member after `after`: the reference."""
    membership = Membership.objects.get(campaign_id=campaign_id, user=user)
    return events_for(membership=membership, after=after, limit=10_000)


def page_events(page: Any) -> list[dict[str, Any]]:
    """The events of a catch-up page (`rolls.live.catchup.Page`), across its frames."""
    return [event for frame in page.frames for event in json.loads(frame)["events"]]


def head_of(campaign_id: int) -> int:
    return Campaign.objects.get(pk=campaign_id).head_seq


# --- clients -------------------------------------------------------------------------------

_refs = itertools.count(1)


@dataclass
class Feed:
    """One real WebSocket client: keeps every frame, and the events in the order received."""

    ws: ClientConnection
    frames: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def seqs(self) -> list[int]:
        return [event["seq"] for event in self.events]

    def others(self, *ignore: str) -> list[dict[str, Any]]:
        """Frames that are not events (nor of the ignored types)."""
        skip = {"event", "events", *ignore}
        return [frame for frame in self.frames if frame["type"] not in skip]

    async def recv(self) -> dict[str, Any]:
        frame = json.loads(await asyncio.wait_for(self.ws.recv(), WAIT))
        self.frames.append(frame)
        if frame["type"] == "event":
            self.events.append(frame["event"])
        elif frame["type"] == "events":
            self.events.extend(frame["events"])
        return frame

    async def until(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        while True:
            frame = await self.recv()
            if predicate(frame):
                return frame

    async def through(self, seq: int) -> list[dict[str, Any]]:
        """Read until the event `seq` has arrived; the events, in order."""
        while not self.events or self.events[-1]["seq"] < seq:
            try:
                await self.recv()
            except TimeoutError:
                raise AssertionError(
                    f"seq {seq} did not arrive within {WAIT} s; the last seqs received:"
                    f" {self.seqs[-8:]}, the last frames: {self.frames[-3:]}"
                ) from None
        return self.events

    async def send(self, frame: dict[str, Any] | str) -> None:
        await self.ws.send(frame if isinstance(frame, str) else json.dumps(frame))

    async def command(self, type: str, **fields: Any) -> dict[str, Any]:
        """Send a command; its answer (result, error, pong or caught_up) carrying our ref."""
        ref = f"r{next(_refs)}"
        await self.send({"type": type, "ref": ref, **fields})
        return await self.until(lambda frame: frame.get("ref") == ref)

    async def quiet(self) -> list[dict[str, Any]]:
        """Ping, and return what arrived before the pong: anything the server still had to say.
        Frames on one socket keep their order, so this proves that nothing else was sent."""
        before = len(self.frames)
        pong = await self.command("ping")
        assert pong["type"] == "pong"
        return self.frames[before:-1]

    async def close(self) -> None:
        await self.ws.close()


async def open_feed(
    url: str, token: str | None = None, headers: dict[str, str] | None = None, **kwargs: Any
) -> Feed:
    """Connect (authenticating with an API token header when given) and read to `caught_up`."""
    feed = await connect_raw(url, token, headers, **kwargs)
    await feed.until(lambda frame: frame["type"] == "caught_up")
    return feed


async def connect_raw(
    url: str, token: str | None = None, headers: dict[str, str] | None = None, **kwargs: Any
) -> Feed:
    headers = dict(headers or {})
    if token:
        headers["Authorization"] = f"Token {token}"
    ws = await asyncio.wait_for(
        connect(url, additional_headers=headers, open_timeout=WAIT, **kwargs), WAIT
    )
    return Feed(ws)


@pytest.fixture
async def feeds() -> Any:
    """Open feeds through `feeds.open(...)`; all are closed after the test."""

    class Feeds(list):
        async def open(self, *args: Any, **kwargs: Any) -> Feed:
            feed = await open_feed(*args, **kwargs)
            self.append(feed)
            return feed

    opened = Feeds()
    yield opened
    for feed in opened:
        await feed.close()
