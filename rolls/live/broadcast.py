"""After-commit publishing of events to the live feed's groups.

Every committed event is rendered by `rolls.reads.present` (which asks
`rolls.reads.visibility.may_see`, the one place that decides who sees what) for each member, and
sent to channel-layer groups so that a socket never receives content its member may not see:

- an event everyone sees alike goes, once, to ``campaign.<id>.all`` (every socket);
- otherwise the GMs' rendering goes to ``campaign.<id>.gm``; the rendering of each other member
  whose view differs from the most common one (the full event of a hidden roll, a check with the
  follow-ups they may apply) to ``campaign.<id>.user.<uid>``; and last the most common rendering
  (often the redacted stub, which keeps the seq so feeds stay gapless) to ``campaign.<id>.all``,
  naming the users who got their own. Sockets that got their own drop it as a duplicate; one whose
  own message was lost reads the event from the log instead (rolls/live/consumers.py).

Two groups per socket (all, and gm or user.<uid>): the in-memory layer's cost grows with them.

A check is rendered from what its write had in hand (`rolls.reads.present.written_check`: the
row, the campaign, the character, the open periods as of its seq, the dramatic failures its
answer read under the lock), so its frames read only the roster (`roster`, one statement); an
event read back from the log is rendered from fresh reads.

In a server, a committed event is handed to one publisher task on the server's event loop, which
renders it in a worker thread (it reads the database) and sends it, in commit order: a request
waits neither for the rendering nor for a busy loop. Elsewhere (a command, a test) the committing
thread renders and sends. Publishing is best effort: the database is the source of truth and
consumers repair any gap from it (rolls/live/consumers.py), so a failure here is logged and never
reaches the service's caller.

Receiving: each process subscribes to a campaign's groups once (`Hub`), whatever the number of its
sockets, and hands every message to the inboxes of the sockets in that group. The layer then
carries and delivers one message per process instead of one per socket (the in-memory layer's
cost per receive grows with the number of channels, so this matters with hundreds of sockets).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from channels.db import database_sync_to_async
from channels.layers import BaseChannelLayer, get_channel_layer
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import SynchronousOnlyOperation
from redis.exceptions import MaxConnectionsError
from redis.exceptions import TimeoutError as RedisTimeout

from accounts.revocation import access_revoked
from campaign.models import Campaign, Membership, Role
from eventlog.event_types import MEMBER_LEFT, MEMBER_ROLE_CHANGED
from eventlog.models import Event
from eventlog.rows import columns, fetch, instance, width
from eventlog.stream import on_event_committed
from rolls.reads.present import CHECK_EVENT_TYPES, texts_to_each, written_check

logger = logging.getLogger("rolls.live")

MESSAGE_TYPE = "feed.event"  # handled by LiveFeedConsumer.feed_event
REVOKED = "feed.revoked"  # handled by LiveFeedConsumer.feed_revoked
MEMBER_EVENTS = (MEMBER_ROLE_CHANGED, MEMBER_LEFT)  # change what a socket may see


def heartbeat_seconds() -> float:
    """How often sockets and hubs check on the layer and the log (LIVE_HEARTBEAT_SECONDS)."""
    value = getattr(settings, "LIVE_HEARTBEAT_SECONDS", None)
    return float(value or os.environ.get("LIVE_HEARTBEAT_SECONDS") or 15)


def group_all(campaign_id: int) -> str:
    return f"campaign.{campaign_id}.all"


def group_gm(campaign_id: int) -> str:
    return f"campaign.{campaign_id}.gm"


def group_user(campaign_id: int, user_id: int) -> str:
    return f"campaign.{campaign_id}.user.{user_id}"


def event_frame(shown: dict[str, Any]) -> str:
    return json.dumps({"type": "event", "event": shown}, separators=(",", ":"))


def _text_frame(text: str) -> str:
    """`event_frame` of an event presented as its JSON text (`texts_to_each`): the same bytes."""
    return f'{{"type":"event","event":{text}}}'


def messages_for(event: Event) -> list[tuple[str, dict[str, Any]]]:
    """(group, message) pairs for one committed event, in the order they are to be sent.

    `rendered_for` tells the consumer whom the text was rendered for ("any", "gm" or "member"), so a
    socket whose role changed meanwhile renders the event itself instead of using it. A check's
    frame differs per member (what they may see, the follow-ups they may apply), so the GMs' text
    goes to the GM group, each member whose text differs from the most common one gets theirs in
    their own group, and the common one goes to everyone else (naming who got their own).
    """
    cid = event.campaign_id
    subject = event.payload.get("user_id") if event.type in MEMBER_EVENTS else None
    base = {"type": MESSAGE_TYPE, "seq": event.seq, "event_type": event.type, "subject": subject}
    check = written_check(event)
    memberships, names = roster(cid, None if check is None else roster_stamp(check.campaign))
    if event.visibility == "public" and event.type not in CHECK_EVENT_TYPES:
        # The common case: rendered once, for a non-GM member when there is one.
        players = [m for m in memberships if m.role != Role.GM]
        sample = (players or memberships or [None])[0]
        if sample is not None:
            text, full = texts_to_each(event, [sample], names)[sample.user_id]
            if full:
                frame = _text_frame(text)
                return [(group_all(cid), {**base, "rendered_for": "any", "text": frame})]
    frames: dict[int, str] = {}  # members of one class of viewer share one rendering: one text
    texts: dict[int, str] = {}
    for uid, (text, _) in texts_to_each(event, memberships, names).items():
        if id(text) not in frames:
            frames[id(text)] = _text_frame(text)
        texts[uid] = frames[id(text)]
    gms = [m.user_id for m in memberships if m.role == Role.GM]
    others = [m.user_id for m in memberships if m.role != Role.GM]
    if len(set(texts.values())) == 1:
        return [
            (group_all(cid), {**base, "rendered_for": "any", "text": next(iter(texts.values()))})
        ]
    pairs: list[tuple[str, dict[str, Any]]] = []
    if gms:  # every GM sees everything and may apply every follow-up: one text
        pairs.append((group_gm(cid), {**base, "rendered_for": "gm", "text": texts[gms[0]]}))
    if not others:
        return pairs
    common = Counter(texts[uid] for uid in others).most_common(1)[0][0]
    own = sorted(uid for uid in others if texts[uid] != common)
    for user_id in own:
        message = {**base, "rendered_for": "member", "text": texts[user_id]}
        pairs.append((group_user(cid, user_id), message))
    message = {**base, "rendered_for": "member", "text": common, "full_for": own}
    pairs.append((group_all(cid), message))
    return pairs


Roster = tuple[list[Membership], dict[int, str]]
# The rosters this process read, by campaign: (its `roster_stamp` then, when, the roster). Every
# change of who is a member, or in what role, is an event that moves the campaign's roster_seq,
# which a check's write reads with the stream lock: a roster kept at that stamp is the check's
# (the campaign's creation time tells apart another campaign that got the same id). Outside the
# log, an admin renames or deletes users (a deleted user's memberships go with them, and no
# event says so): a kept roster is read again after ROSTER_KEPT_SECONDS. A database restored to
# an earlier point reuses seqs: restart the processes after a restore (docs/operations.md).
_rosters: dict[int, tuple[tuple, float, Roster]] = {}
ROSTERS_KEPT = 4096
ROSTER_KEPT_SECONDS = 60.0


def roster_stamp(campaign: Campaign) -> tuple:
    return campaign.roster_seq, campaign.created_at


def roster(campaign_id: int, stamp: tuple | None = None) -> Roster:
    """The campaign's members and their usernames. ``stamp``: the campaign's `roster_stamp` as
    the write being published read it under the stream lock; the roster kept at that stamp is
    then used without a read. Else one statement, hand-written (the ORM's query building would
    cost more than the rest of the rendering)."""
    kept = _rosters.get(campaign_id)
    if (
        kept is not None
        and stamp is not None
        and kept[0] == stamp
        and time.monotonic() - kept[1] < ROSTER_KEPT_SECONDS
    ):
        return kept[2]
    User = get_user_model()
    users = User._meta.db_table
    username = User._meta.get_field(User.USERNAME_FIELD).column
    sql = (
        f"SELECT {columns(Membership, 'm')}, u.{username}, {columns(Campaign, 'c')} "
        f"FROM {Membership._meta.db_table} m "
        f"JOIN {users} u ON u.{User._meta.pk.column} = m.user_id "
        f"JOIN {Campaign._meta.db_table} c ON c.id = m.campaign_id "
        "WHERE m.campaign_id = %s ORDER BY m.id"
    )
    rows = fetch(sql, (campaign_id,))  # prepared on PostgreSQL
    n = width(Membership)
    members = [instance(Membership, row[:n]) for row in rows]
    read = members, {member.user_id: row[n] for member, row in zip(members, rows, strict=True)}
    if rows:
        if len(_rosters) >= ROSTERS_KEPT:
            _rosters.clear()
        campaign = instance(Campaign, rows[0][n + 1 :])
        _rosters[campaign_id] = (roster_stamp(campaign), time.monotonic(), read)
    return read


def forget() -> None:
    """Drop the kept rosters (tests: a database emptied between them reuses campaign ids)."""
    _rosters.clear()


Pairs = list[tuple[str, dict[str, Any]]]


async def _send(pairs: Pairs) -> None:
    layer = get_channel_layer()
    for group, message in pairs:
        await layer.group_send(group, {**message, "group": group})  # the hubs route by it


# Rendering reads the database: off the server loop's thread, and not on the one thread that
# channels' database calls share (the sockets' own reads do not wait behind it).
_render = database_sync_to_async(messages_for, thread_sensitive=False)


class _Publisher:
    """The server loop's publishing task; fed from the committing threads, drained in order.

    A committed event is handed over as it is: it is rendered here, off the request's thread
    (the request answers without waiting for it), then sent. ``renders_on_loop``: on a loop that
    serves no socket (config/wsgi.py's), an event whose rendering needs no query is rendered on
    the loop's own thread (`_rendered_on_loop`)."""

    loop: asyncio.AbstractEventLoop | None = None
    queue: asyncio.Queue[Event | Pairs]
    task: asyncio.Task | None = None
    renders_on_loop = False

    @classmethod
    def bind(cls, loop: asyncio.AbstractEventLoop, *, render_on_loop: bool = False) -> None:
        if cls.loop is not loop:
            cls.loop, cls.queue = loop, asyncio.Queue()
            cls.task = loop.create_task(cls.drain(cls.queue))
        cls.renders_on_loop = render_on_loop

    @classmethod
    async def drain(cls, queue: asyncio.Queue[Event | Pairs]) -> None:
        while True:
            item = await queue.get()
            seq = item.seq if isinstance(item, Event) else item[0][1].get("seq")
            try:
                pairs = item
                if isinstance(item, Event):
                    pairs = _rendered_on_loop(item) if cls.renders_on_loop else _NEEDS_DATABASE
                    if pairs is _NEEDS_DATABASE:
                        pairs = await _render(item)
                if pairs:
                    await _send(pairs)
            except Exception as error:
                _not_published(seq, error)

    @classmethod
    def submit(cls, item: Event | Pairs) -> bool:
        loop = cls.loop
        if loop is None or not loop.is_running():
            return False
        loop.call_soon_threadsafe(cls.queue.put_nowait, item)
        return True


_NEEDS_DATABASE = object()


def _rendered_on_loop(event: Event) -> Pairs | object:
    """`messages_for` on the publishing loop's own thread, or `_NEEDS_DATABASE` when it would
    query: Django refuses a query from a thread that runs an event loop before sending it
    (SynchronousOnlyOperation), and the event is then rendered on the thread pool. A check this
    process wrote is rendered from what its write had in hand and the roster is kept, so about
    one render in 500 queries (bench/check_path.py); the thread pool's round trip cost more CPU
    than the render itself (0.6 against 0.18 ms a check)."""
    try:
        return messages_for(event)
    except SynchronousOnlyOperation:
        return _NEEDS_DATABASE


def serving(
    application: Callable[..., Awaitable[None]], *, render_on_loop: bool = False
) -> Callable[..., Awaitable[None]]:
    """Wrap the ASGI application: the loop that serves it publishes the live feed, and runs its
    database calls on no more threads than the process has pooled connections.
    ``render_on_loop``: the loop serves no socket (a WSGI process's publishing loop), so a
    render that needs no query may hold it (`_Publisher`)."""

    async def app(scope, receive, send):
        loop = asyncio.get_running_loop()
        if _Publisher.loop is not loop and (threads := database_threads()):
            loop.set_default_executor(ThreadPoolExecutor(threads, thread_name_prefix="database"))
        _Publisher.bind(loop, render_on_loop=render_on_loop)
        return await application(scope, receive, send)

    return app


async def _no_request(scope: Any, receive: Any, send: Any) -> None:
    return None


def start_publishing_loop() -> asyncio.AbstractEventLoop:
    """An event loop in a daemon thread that publishes this process's committed events, for a
    process whose own loop serves no socket (config/wsgi.py). It renders an event itself when
    that needs no query, unless Django was told to allow queries on a loop's thread
    (DJANGO_ALLOW_ASYNC_UNSAFE): they would then run there, not on the thread pool."""
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="live-publish", daemon=True).start()
    render_on_loop = not os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    publisher = serving(_no_request, render_on_loop=render_on_loop)
    asyncio.run_coroutine_threadsafe(publisher({}, None, None), loop).result(10)
    return loop


def pool_size() -> int | None:
    """The connections a process's pool holds at most (DB_POOL_MAX_SIZE); None without one."""
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    return pool["max_size"] if isinstance(pool, dict) and "max_size" in pool else None


def database_threads() -> int | None:
    """Threads of the serving loop's thread pool, where the sockets' database calls, the sign-in
    and this publisher's rendering run (`thread_sensitive=False`), each holding at most one
    pooled connection: asyncio's default number, but never more than the pool (DB_POOL_MAX_SIZE)
    less one connection for the webhook sender and one for the catch-up's reader
    (`rolls.live.catchup`), so that these calls alone never wait for a connection (where uvicorn
    also serves HTTP, Django's sync views take the pool's connections from threads of their
    own). None without a pool."""
    size = pool_size()
    if size is None:
        return None
    return max(1, min(size - 2, 32, (os.cpu_count() or 1) + 4))


def _not_published(seq: int | None, error: Exception) -> None:
    logger.warning("live feed: seq %s not published (%s); sockets repair from the log", seq, error)


class _SendingLoop:
    """An event loop on a thread of its own, started once per process, for the processes that
    serve no socket (a command, a WSGI worker, a test): AsyncToSync would start a loop and a
    thread for every send (about half a millisecond of CPU per event), and a channel layer
    keeps its connections per loop, so a loop per send was a new Redis connection each time."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _pid = 0

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            alive = cls._thread is not None and cls._thread.is_alive()
            if cls._loop is None or not alive or cls._pid != os.getpid():  # new, or forked
                cls._loop = asyncio.new_event_loop()
                cls._thread = threading.Thread(
                    target=cls._loop.run_forever, name="live-publish", daemon=True
                )
                cls._thread.start()
                cls._pid = os.getpid()
            return cls._loop


def _send_now(pairs: Pairs) -> None:
    """Send from a process that serves no socket (a command, a worker, a test), and wait.

    The sending runs on `_SendingLoop`'s thread, also when the committing thread runs an event
    loop itself (an async test, Playwright's sync API in browser tests), which could not wait
    on a coroutine of its own."""
    asyncio.run_coroutine_threadsafe(_send(pairs), _SendingLoop.get()).result()


def publish(event: Event) -> None:
    """The `on_event_committed` listener: runs after the service's transaction commits."""
    if _Publisher.submit(event):  # rendered and sent by the server's loop
        return
    try:
        pairs = messages_for(event)
        if pairs:
            _send_now(pairs)
    except Exception as error:  # the sockets repair from the log; the service has succeeded
        _not_published(event.seq, error)


on_event_committed(publish)


def close_sockets_of(sender: Any = None, *, user_id: int, **kwargs: Any) -> None:
    """The `access_revoked` listener: every socket of the user, in every process, closes (4401)."""
    campaign_ids = Membership.objects.filter(user_id=user_id).values_list("campaign_id", flat=True)
    pairs = [(group_user(cid, user_id), {"type": REVOKED}) for cid in campaign_ids]
    try:
        if pairs and not _Publisher.submit(pairs):
            _send_now(pairs)
    except Exception:  # the layer is down: the sockets stay open until their next reconnect
        logger.warning("live feed: could not close the sockets of user %s", user_id, exc_info=True)


access_revoked.connect(close_sockets_of)


# --- receiving -------------------------------------------------------------------------------


class Subscriber(Protocol):
    inbox: asyncio.Queue[dict[str, Any]]

    async def recover(self) -> None:
        """Catch up from the log: the layer was down, messages may have been lost."""


class Hub:
    """One process's subscription to one campaign's groups, shared by its sockets."""

    _hubs: dict[tuple[asyncio.AbstractEventLoop, int], Hub] = {}

    def __init__(self, layer: BaseChannelLayer, key: tuple[asyncio.AbstractEventLoop, int]):
        self.layer, self.key = layer, key
        self.channel = ""
        self.groups_of: dict[Subscriber, frozenset[str]] = {}
        self.added: set[str] = set()  # groups the layer has our channel in, as far as we know
        self.lock = asyncio.Lock()
        self.tasks: list[asyncio.Task] = []
        self.down = False

    @classmethod
    def of(cls, layer: BaseChannelLayer, campaign_id: int) -> Hub:
        key = (asyncio.get_running_loop(), campaign_id)
        hub = cls._hubs.get(key)
        if hub is None or hub.layer is not layer:
            hub = cls._hubs[key] = cls(layer, key)
        return hub

    async def subscribe(self, subscriber: Subscriber, groups: Iterable[str]) -> None:
        """Hand these groups' messages to the subscriber (instead of what it had). Raises if the
        layer refuses a new group; the hub keeps trying (`_refresh`)."""
        async with self.lock:
            if not self.tasks:  # new, or closed by its last socket while this one arrived
                self.channel = self.channel or await self.layer.new_channel()
                self.tasks = [
                    asyncio.create_task(self._receive()),
                    asyncio.create_task(self._refresh()),
                ]
                self._hubs.setdefault(self.key, self)
            self.groups_of[subscriber] = frozenset(groups)
            await self._sync()

    async def leave(self, subscriber: Subscriber) -> None:
        async with self.lock:
            self.groups_of.pop(subscriber, None)
            if not self.groups_of:  # the last socket: the hub goes
                for task in self.tasks:
                    task.cancel()
                self.tasks = []
                if self._hubs.get(self.key) is self:
                    del self._hubs[self.key]
            with contextlib.suppress(Exception):  # the layer is down: memberships expire
                await self._sync()

    async def _sync(self, again: bool = False) -> None:
        wanted = frozenset().union(*self.groups_of.values())
        for group in self.added - wanted:
            self.added.discard(group)
            await self.layer.group_discard(group, self.channel)
        for group in wanted if again else wanted - self.added:
            await self.layer.group_add(group, self.channel)
            self.added.add(group)

    def _route(self, message: dict[str, Any]) -> None:
        group = message.get("group")
        for subscriber, groups in self.groups_of.items():
            if group in groups:
                with contextlib.suppress(asyncio.QueueFull):  # that socket repairs from the log
                    subscriber.inbox.put_nowait(message)

    async def _receive(self) -> None:
        delay = 0.2
        while True:
            try:
                message = await self.layer.receive(self.channel)
            except RedisTimeout:
                # redis-py >= 8 gives up on channels_redis's 5 s BZPOPMIN (channels_redis#422)
                # unless socket_timeout is raised: an idle wait, not an outage. A message popped
                # in that instant is lost, and repaired from the log like any other.
                continue
            except Exception as error:
                if not self.down and not isinstance(error, MaxConnectionsError):
                    logger.warning("live feed: channel layer unavailable: %s", error)
                    self.down = True
                    _spawn(self._until_back())
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
                await self._rejoin()
                continue
            delay = 0.2
            try:
                self._route(message)
            except Exception:  # a bad message must not stop the process's feed
                logger.exception("live feed: could not route %r", message.get("type"))

    async def _rejoin(self) -> None:
        """Put our channel back in every group (a restarted Redis has none); after an outage,
        have every socket catch up from the log."""
        try:
            async with self.lock:
                await self._sync(again=True)
        except Exception:
            return  # still down
        if self.down:
            self.down = False
            logger.warning("live feed: channel layer back; sockets catch up from the log")
            for subscriber in list(self.groups_of):
                _spawn(subscriber.recover())

    async def _until_back(self) -> None:
        """Rejoin every second or two until the layer is back: the receive loop's own rejoin may
        not come (a restarted Redis can answer its wait first, and a channel in no group is sent
        nothing), and the sockets would wait for the next heartbeat's."""
        while self.down and self.tasks:
            await asyncio.sleep(random.uniform(1.0, 2.0))
            await self._rejoin()

    async def _refresh(self) -> None:
        while True:  # also renews the groups' expiry, and retries a group the layer refused
            await asyncio.sleep(heartbeat_seconds() * random.uniform(0.75, 1.25))
            await self._rejoin()


_tasks: set[asyncio.Task] = set()


def _spawn(coroutine: Awaitable[None]) -> None:
    task = asyncio.ensure_future(coroutine)
    _tasks.add(task)  # keep a reference until it is done
    task.add_done_callback(_tasks.discard)
