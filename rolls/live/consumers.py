"""The live feed of one campaign over a WebSocket (protocol: docs/websocket.md).

A socket first receives every event after the client's `after` from the database, then live
events, in seq order, each once. Live messages come from `rolls.live.broadcast` through the channel
layer (one subscription per process and campaign, `Hub`, which fills each socket's inbox). Messages
may be lost on the way (channels_redis drops them silently when a channel is full, and loses
everything while Redis restarts): a message whose seq skips ahead makes the consumer read the
missing range from the database first, a periodic heartbeat (and the client's ping) catch up a
missing tail, and after a layer outage every socket catches up from the log.

Commands go through the same services as the REST API; their errors come back as error frames
and the socket stays open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from asgiref.sync import sync_to_async
from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from channels.utils import await_many_dispatch
from django.conf import settings
from django.utils import translation
from django.utils.translation import get_supported_language_variant
from django.utils.translation import gettext as _
from django.utils.translation.trans_real import parse_accept_lang_header

from accounts.throttles import FrameBucket, write_wait
from campaign import idempotency
from campaign.access import membership_of
from campaign.errors import DomainError, InvalidInput
from campaign.limits import check_shape, decode_json
from campaign.models import Campaign, Membership, Role
from config.outage import refusal_for
from eventlog.chain import is_chain_hash
from eventlog.writers import Busy, writer_slot
from rolls.checks import calls, followups, services
from rolls.live import catchup
from rolls.live.broadcast import (
    MEMBER_EVENTS,
    Hub,
    group_all,
    group_gm,
    group_user,
    heartbeat_seconds,
)
from rolls.live.presence import presence_for
from rolls.reads.selectors import chain_holds, parse_after

logger = logging.getLogger("rolls.live")

CLOSE_NOT_AUTHENTICATED = 4401
CLOSE_NOT_A_MEMBER = 4403  # also: no such campaign (a non-member learns nothing)
MAX_FETCH = 1000  # events per fetch request
MAX_REF = 100
WRITES = {"roll", "dramatic_failure", "fortune", "extra_nice", "reveal", "call", "close_call"}
RECOVERING_AT_ONCE = 16  # sockets of one process catching up after an outage at the same time
# Catch-up pages one process reads and renders at a time. One: rendering is CPU-bound, and every
# extra reader thread slows REST requests down (the GIL); bench/catchup.py measured 2 and 4 worse.
READING_AT_ONCE = 1
INBOX = 1000  # live messages waiting for a socket; beyond, they are dropped and read from the log


class Throttled(DomainError):
    status = 429
    code = "throttled"

    def __init__(self, retry_after: float) -> None:
        super().__init__("frame", f"too many frames or commands; wait {retry_after:.1f} s")
        self.retry_after = max(0.1, round(retry_after, 1))


def _whole(frame: dict[str, Any], key: str, minimum: int = 0) -> int:
    value = frame.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise InvalidInput(key, _("must be a whole number of at least {n}").format(n=minimum))
    return value


def _object(frame: dict[str, Any], key: str) -> dict[str, Any]:
    value = frame.get(key)
    if not isinstance(value, dict):
        raise InvalidInput(key, _("must be a JSON object"))
    return value


_recovering: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}


def _recovery_slot() -> asyncio.Semaphore:
    """Bounds the herd of sockets catching up after an outage (the database, redis-py's pool)."""
    loop = asyncio.get_running_loop()
    return _recovering.setdefault(loop, asyncio.Semaphore(RECOVERING_AT_ONCE))


_reading: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}


def _read_slot() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    return _reading.setdefault(loop, asyncio.Semaphore(READING_AT_ONCE))


def _database(function: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """`function` run on the event loop's thread pool (sized to the connection pool:
    rolls/live/broadcast.py's `database_threads`), not on the one thread that channels' database
    calls share by default, where every socket of the process would queue behind every other's
    calls, writes included, whatever their campaign. Like channels' default, it closes the
    thread's connections before and after (back to the pool), as a request does."""
    return database_sync_to_async(function, thread_sensitive=False)


# A page's reading does not queue behind (nor hold up) the sockets' other database calls.
_read_page = _database(catchup.page_after)
# The per-user write budget is counted in the cache (Redis): off the shared thread too.
_write_wait = sync_to_async(write_wait, thread_sensitive=False)

# (loop, campaign) -> (its writers' turns, the writes holding or waiting for one): dropped when
# the last of them is done, so a process does not keep one per campaign it ever wrote to.
_turns: dict[tuple[asyncio.AbstractEventLoop, int], tuple[asyncio.Semaphore, list[int]]] = {}


@contextlib.asynccontextmanager
async def _writer_turn(campaign_id: int) -> AsyncIterator[float]:
    """A socket write's turn among the campaign's WRITERS_PER_CAMPAIGN writers of this loop,
    waited for here, on the loop: a pool thread waiting in `writer_slot` would hold up every
    other campaign's socket calls, and a stuck campaign's queue would fill the pool. Yields the
    seconds waited, which count against the write's one budget (DB_LOCK_TIMEOUT_SECONDS)."""
    key = (asyncio.get_running_loop(), campaign_id)
    turn, writes = _turns.get(key) or _turns.setdefault(
        key, (asyncio.Semaphore(settings.WRITERS_PER_CAMPAIGN), [0])
    )
    writes[0] += 1  # the loop's own thread only: no lock needed
    try:
        waited = 0.0
        if turn.locked():
            began = time.monotonic()
            try:
                async with asyncio.timeout(settings.DB_LOCK_TIMEOUT_SECONDS):
                    await turn.acquire()
            except TimeoutError:
                message = f"campaign {campaign_id}: no writer turn within the lock timeout"
                raise Busy(message) from None
            waited = time.monotonic() - began
        else:
            await turn.acquire()
        try:
            yield waited
        finally:
            turn.release()
    finally:
        writes[0] -= 1
        if not writes[0]:
            _turns.pop(key, None)


# campaign -> (when read, head seq, head hash): heartbeats share it, catch-up pages are keyed by it
_heads: dict[int, tuple[float, int, str]] = {}


def _remember_head(campaign_id: int, head: int, head_hash: str) -> None:
    _heads[campaign_id] = (time.monotonic(), head, head_hash)


class _PresenceView:
    """Who is online in one campaign, read once for all the GM sockets of a process that are
    told of a change (a reconnect storm of GM tabs would read it once per socket per change:
    N² reads of the layer and the database). `fresh` answers with a reading that began after it
    was called: a reading under way serves only those who asked before it began; those who ask
    meanwhile share the one that follows it."""

    _views: dict[tuple[asyncio.AbstractEventLoop, Any, int], _PresenceView] = {}

    def __init__(self, layer: Any, campaign_id: int) -> None:
        self.layer, self.campaign_id = layer, campaign_id
        self.running: asyncio.Future | None = None
        self.pending: asyncio.Future | None = None

    @classmethod
    def of(cls, layer: Any, campaign_id: int) -> _PresenceView:
        key = (asyncio.get_running_loop(), id(layer), campaign_id)
        view = cls._views.get(key)
        if view is None or view.layer is not layer:
            view = cls._views[key] = cls(layer, campaign_id)
        return view

    async def fresh(self) -> list[dict[str, Any]]:
        if self.pending is None:
            self.pending = asyncio.ensure_future(self._after(self.running))
        return await asyncio.shield(self.pending)

    async def _after(self, previous: asyncio.Future | None) -> list[dict[str, Any]]:
        if previous is not None:
            with contextlib.suppress(Exception):
                await previous
        self.running, self.pending = self.pending, None  # from now on, askers wait for the next
        online = await presence_for(self.layer).online(self.campaign_id)
        return await _database(_describe)(self.campaign_id, online)


class LiveFeedConsumer(AsyncWebsocketConsumer):
    campaign_id: int
    membership: Membership | None = None
    last_sent = 0  # every seq up to this one has been sent to the client
    closed = False

    # --- lifecycle -------------------------------------------------------------------------

    async def __call__(self, scope, receive, send) -> None:
        # Live messages come from this process's hub for the campaign, not from a channel of the
        # socket's own: the layer delivers each message once per process (rolls/live/broadcast.py).
        self.scope = scope
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        self.channel_name = await self.channel_layer.new_channel()  # the socket's id in presence
        self.base_send = send
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=INBOX)
        self.hub: Hub | None = None
        self._lock = asyncio.Lock()  # event delivery: catch-up, live, repair, one at a time
        self._send_lock = asyncio.Lock()
        self._heartbeat: asyncio.Task | None = None
        self._last_presence: list[dict[str, Any]] | None = None
        self._presence_task: asyncio.Task | None = None
        self._presence_stale = False
        self.bucket = FrameBucket()
        try:
            with contextlib.suppress(StopConsumer):
                await await_many_dispatch([receive, self.inbox.get], self.dispatch)
        finally:  # however it ends: no heartbeat, subscription or presence outlives the socket
            await self._leave()

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Unlike channels' dispatch, no close_old_connections per message: every database call
        # here goes through database_sync_to_async, which does it, and live messages touch none.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            logger.error("live feed: no handler for %r", message.get("type"))
            return
        # Error frames speak the language of the page that opened the socket.
        with translation.override(language_of(self.scope)):
            await handler(message)

    async def websocket_connect(self, message: dict[str, Any]) -> None:
        # Accept first, so that a refusal can carry its close code to the client.
        await self.accept()
        self.user = self.scope.get("user")
        if self.user is None or not self.user.is_authenticated:
            await self._close(CLOSE_NOT_AUTHENTICATED)
            return
        self.campaign_id = self.scope["url_route"]["kwargs"]["campaign_id"]
        self.membership = await _database(membership_of)(self.campaign_id, self.user)
        if self.membership is None:
            await self._close(CLOSE_NOT_A_MEMBER)
            return
        # Subscribe before reading the log: what commits after the read arrives live.
        self.hub = Hub.of(self.channel_layer, self.campaign_id)
        await self._subscribe()
        with contextlib.suppress(Exception):  # presence waits for the layer
            await self._announce(joined=True)
        self._heartbeat = asyncio.create_task(self._beat())
        after, witness, problem = self._after_from_query()
        async with self._lock:
            # Read again with the head: a change of role (or a removal) committed since the
            # read above is at or below the head, so neither the catch-up nor the live feed
            # would bring it, and every page would be rendered for the role this socket had.
            head = await self._reread_membership()
            if head is None:
                return
            if witness is not None and not await self._witness_holds(after, witness):
                await self._history_changed(after, witness, head)
                after = None  # this client's history is not the log's: it starts afresh
            elif problem is None and after is not None and after > head:
                problem = InvalidInput(
                    "after", _("is ahead of this campaign's log (head {head})").format(head=head)
                )
            self.last_sent = head if problem or after is None else after
            if problem:
                await self._error(None, problem)
            await self._send_from_db(until=head)
            await self._send_json({"type": "caught_up", "head": self.last_sent})
        if self._is_gm:
            await self._send_presence()

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        raise StopConsumer()

    async def _leave(self) -> None:
        self.closed = True
        for task in (self._heartbeat, self._presence_task):
            if task is not None:
                task.cancel()
        if self.hub is None:
            return
        await self.hub.leave(self)
        try:
            await self._announce(joined=False)
        except Exception as error:  # the layer is down: the presence entry expires
            logger.info("live feed: could not leave presence: %s", error)

    async def _subscribe(self) -> None:
        cid = self.campaign_id
        # Every socket hears its user's group: for a GM, only `feed.revoked` is ever sent there.
        groups = [
            group_all(cid),
            group_user(cid, self.user.pk),
            *([group_gm(cid)] if self._is_gm else []),
        ]
        try:
            await self.hub.subscribe(self, groups)
        except Exception as error:  # the layer is down: the hub retries; the log covers the gap
            logger.info("live feed: subscription pending: %s", error)

    async def recover(self) -> None:
        """After a layer outage (the hub calls this): presence again, and catch up from the log."""
        async with _recovery_slot():
            with contextlib.suppress(Exception):
                await self._announce(joined=True)
            try:
                await self._catch_up()
            except Exception:
                logger.warning(
                    "live feed: catching up failed; the heartbeat retries", exc_info=True
                )

    async def _beat(self) -> None:
        interval = heartbeat_seconds()
        head_before = None
        while not self.closed:
            # Jittered, so that sockets opened together (after a restart) do not beat together.
            await asyncio.sleep(interval * random.uniform(0.75, 1.25))
            try:
                await presence_for(self.channel_layer).join(
                    self.campaign_id, self.user.pk, self.channel_name, ttl=3 * interval
                )
            except Exception as error:
                logger.info("live feed: heartbeat could not reach the layer: %s", error)
            try:
                # What was committed a heartbeat ago and is still missing was lost: catch up to
                # there. Newer events may just be on their way, under load; they are not re-read.
                if head_before is not None and head_before > self.last_sent:
                    await self._catch_up(until=head_before)
                head_before = await self._head(max_age=1.0)
                if self._is_gm:
                    await self._send_presence(only_if_changed=True)
            except Exception:
                logger.warning("live feed: heartbeat failed", exc_info=True)

    # --- delivery --------------------------------------------------------------------------

    async def feed_event(self, message: dict[str, Any]) -> None:
        """A live event from `rolls.live.broadcast`, rendered for a class of viewer (its
        ``rendered_for``) this socket belongs to."""
        seq = message["seq"]
        async with self._lock:
            if self.closed or seq <= self.last_sent:
                return  # already sent: from the log during catch-up, or a duplicate
            if seq > self.last_sent + 1:  # the layer lost something: fill from the log first
                await self._send_from_db(until=seq - 1)
                if self.closed or self.last_sent != seq - 1:
                    return
            if not self._renders_for_me(message):
                await self._send_from_db(until=seq)
                return
            await self._send_text(message["text"])
            self.last_sent = seq
            if message["event_type"] in MEMBER_EVENTS and message["subject"] == self.user.pk:
                await self._reread_membership()

    def _renders_for_me(self, message: dict[str, Any]) -> bool:
        rendered_for = message["rendered_for"]
        if rendered_for == "any":
            return True
        if self._is_gm:  # a GM seeing a stub: the GM's own rendering was lost
            return rendered_for == "gm"
        # A stub naming us among those who get the full event: the full one was lost.
        return rendered_for == "member" and self.user.pk not in message.get("full_for", ())

    async def _send_from_db(self, until: int, start: int | None = None) -> None:
        """Send (start or last_sent, until] from the log as this member may see it, in pages.

        Pages are read and rendered once per class of viewer and shared by the sockets catching
        up over the same range (rolls/live/catchup.py). A process reads and renders at most
        READING_AT_ONCE pages at a time, whatever the number of sockets catching up (a reconnect
        storm): memory stays bounded, REST requests keep their share of the CPU, and the sockets
        take turns (the semaphore is FIFO). The page is sent after the slot is released, so a
        slow client holds up nobody else; the next page is read meanwhile (sending compresses a
        frame on the event loop's thread, off the GIL, while the reading thread presents)."""
        after = self.last_sent if start is None else start
        reading: asyncio.Future | None = None  # the next page, read while one is sent
        try:
            while after < until and not self.closed:
                page = await (reading or self._page_from_db(after, until))
                reading = None
                if page is None:
                    return
                after = page.last
                if after < until and not page.about_me:
                    reading = asyncio.ensure_future(self._page_from_db(after, until))
                    # Let it reach its thread: sending compresses before it yields to the loop,
                    # and the next page would be read only once this one is compressed.
                    await asyncio.sleep(0)
                for frame in page.frames:
                    await self._send_text(frame)
                self.last_sent = max(self.last_sent, after)
                if page.about_me:  # rendered for our old membership: re-read it, then go on
                    await self._reread_membership()
        finally:
            if reading is not None:  # the socket closed, or this task was cancelled
                reading.cancel()
                reading.add_done_callback(_retrieved)

    async def _page_from_db(self, after: int, until: int) -> catchup.Page | None:
        head = self._known_head()
        page = catchup.kept_page(self.membership, after, until, head)
        if page is None:
            async with _read_slot():
                page = await _read_page(self.membership, after, until, head)
        return page

    async def _reread_membership(self) -> int | None:
        """Read this socket's membership again, with the campaign's head in the same statement
        (the membership is then at least as new as every event up to the head), and return the
        head; None, the socket closed, when the user is no longer a member."""
        found = await _database(_membership_and_head)(self.campaign_id, self.user)
        if found is None:
            self.membership = None
            await self._close(CLOSE_NOT_A_MEMBER)
            return None
        role = self.membership.role if self.membership is not None else None
        self.membership, head, head_hash = found
        _remember_head(self.campaign_id, head, head_hash)
        if self.membership.role != role:  # the groups it hears: the GMs' or not
            await self._subscribe()
        return head

    async def _catch_up(self, until: int | None = None) -> None:
        async with self._lock:
            if self.membership is None or self.closed:
                return
            await self._send_from_db(until=until if until is not None else await self._head())

    async def _head(self, max_age: float = 0.0) -> int:
        """The campaign's last seq; the heartbeats of one process share a recent reading."""
        read_at, head, _hash = _heads.get(self.campaign_id, (0.0, 0, ""))
        if time.monotonic() - read_at > max_age:
            head, head_hash = await _database(_head_of)(self.campaign_id)
            _remember_head(self.campaign_id, head, head_hash)
        return head

    def _known_head(self) -> catchup.Head:
        """The campaign's head as this process read it last (seq, hash)."""
        _read_at, head, head_hash = _heads.get(self.campaign_id, (0.0, 0, ""))
        return head, head_hash

    # --- presence --------------------------------------------------------------------------

    async def _announce(self, joined: bool) -> None:
        presence = presence_for(self.channel_layer)
        if joined:
            ttl = 3 * heartbeat_seconds()
            await presence.join(self.campaign_id, self.user.pk, self.channel_name, ttl=ttl)
        else:
            await presence.leave(self.campaign_id, self.channel_name)
        group = group_gm(self.campaign_id)
        await self.channel_layer.group_send(group, {"type": "presence.changed", "group": group})

    async def presence_changed(self, message: dict[str, Any]) -> None:
        """Someone came or went: a GM's socket shows who is online now. The notices of a burst
        (a reconnect storm) are coalesced: while one refresh is under way, the next ones make
        one more after it, not one each."""
        if not self._is_gm or self.closed:
            return
        self._presence_stale = True
        if self._presence_task is None or self._presence_task.done():
            self._presence_task = asyncio.create_task(self._refresh_presence())

    async def _refresh_presence(self) -> None:
        while self._presence_stale and not self.closed:
            self._presence_stale = False
            await self._send_presence(only_if_changed=True)

    async def _send_presence(self, only_if_changed: bool = False) -> None:
        try:
            members = await _PresenceView.of(self.channel_layer, self.campaign_id).fresh()
        except Exception as error:  # the layer is down: presence waits for it
            logger.info("live feed: presence unavailable: %s", error)
            return
        if only_if_changed and members == self._last_presence:
            return
        self._last_presence = members
        await self._send_json({"type": "presence", "members": members})

    # --- client frames ---------------------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.membership is None or self.closed:
            return
        ref = None
        try:
            if text_data is None:
                raise InvalidInput("frame", _("send JSON text frames, not binary ones"))
            wait = self.bucket.take()
            frame = decode_json(text_data, "frame")
            if not isinstance(frame, dict):
                raise InvalidInput("frame", _("expected a JSON object"))
            ref = frame.get("ref")
            if not (ref is None or isinstance(ref, int | str)) or len(str(ref)) > MAX_REF:
                ref = None
                raise InvalidInput(
                    "ref", _("must be a string or number of at most {n}").format(n=MAX_REF)
                )
            # The limits of every REST body; checked after the ref, so that a refusal names the
            # command it answers (a ref is sent back escaped, whatever text it holds).
            check_shape(frame)
            if wait is not None:
                raise Throttled(wait)
            kind = frame.get("type")
            command = self.COMMANDS.get(kind) if isinstance(kind, str) else None
            if command is None:
                raise InvalidInput(
                    "type",
                    _("unknown frame type; one of {types}").format(types=", ".join(self.COMMANDS)),
                )
            if kind in WRITES and (wait := await _write_wait(self.user.pk)):
                raise Throttled(wait)  # the same per-user budget as the REST API's writes
            data = await command(self, frame)
        except DomainError as error:
            await self._error(ref, error)
        except Exception as error:
            if refusal := refusal_for(error):  # busy, or the database down: retry later
                await self._send_json(
                    {
                        "type": "error",
                        "ref": ref,
                        "field": None,
                        "message": str(refusal.message),
                        "code": refusal.code,
                        "retry_after": refusal.retry_after,
                    }
                )
                return
            logger.exception("live feed: command failed")
            await self._send_json(
                {
                    "type": "error",
                    "ref": ref,
                    "field": None,
                    "message": _("the server failed to handle this frame"),
                    "code": "server_error",
                }
            )
        else:
            if data is not None:
                await self._send_json({"type": "result", "ref": ref, "data": data})

    async def _ping(self, frame: dict[str, Any]) -> None:
        await self._catch_up()
        await self._send_json({"type": "pong", "ref": frame.get("ref"), "head": self.last_sent})

    async def _resume(self, frame: dict[str, Any]) -> None:
        after = _whole(frame, "after")
        witness = frame.get("hash")
        if witness is not None and not is_chain_hash(witness):
            raise InvalidInput("hash", "must be the 64 hex digits of the event's hash")
        async with self._lock:
            # With the head, the membership: the range may skip this member's own change.
            head = await self._reread_membership()
            if head is None:
                return
            if witness is not None and not await self._witness_holds(after, witness):
                await self._history_changed(after, witness, head, frame.get("ref"))
                return
            if after > head:
                raise InvalidInput(
                    "after", _("is ahead of this campaign's log (head {head})").format(head=head)
                )
            await self._send_from_db(until=max(head, self.last_sent), start=after)
            await self._send_json({"type": "caught_up", "head": self.last_sent})

    async def _fetch(self, frame: dict[str, Any]) -> dict[str, int]:
        first, last = _whole(frame, "from", minimum=1), _whole(frame, "to", minimum=1)
        if last < first:
            raise InvalidInput("to", _("must not be before from"))
        if last - first >= MAX_FETCH:
            raise InvalidInput("to", _("fetch at most {n} events at a time").format(n=MAX_FETCH))
        async with self._lock:
            # With the head, the membership: the range may skip this member's own change.
            head = await self._reread_membership()
            if head is not None:
                last = min(last, head)
                await self._send_from_db(until=last, start=first - 1)
        return {"from": first, "to": last}

    async def _roll(self, frame: dict[str, Any]) -> dict[str, Any]:
        # Only the seq: a blind roll's roller may not see the result.
        return await self._write(
            frame,
            services.check_roll,
            lambda check: {"seq": check.seq},
            request=_object(frame, "request"),
        )

    async def _dramatic_failure(self, frame: dict[str, Any]) -> dict[str, Any]:
        seq = _whole(frame, "seq", minimum=1)
        return await self._write(frame, followups.take_dramatic_failure, _check_seq, seq=seq)

    async def _fortune(self, frame: dict[str, Any]) -> dict[str, Any]:
        seq = _whole(frame, "seq", minimum=1)
        return await self._write(
            frame,
            followups.spend_fortune,
            _check_seq,
            seq=seq,
            die=frame.get("die"),
            value=frame.get("value"),
        )

    async def _extra_nice(self, frame: dict[str, Any]) -> dict[str, Any]:
        seq = _whole(frame, "seq", minimum=1)
        return await self._write(
            frame, followups.take_extra_nice, _check_seq, seq=seq, count=frame.get("count")
        )

    async def _reveal(self, frame: dict[str, Any]) -> dict[str, Any]:
        seq = _whole(frame, "seq", minimum=1)
        return await self._write(frame, services.reveal_check, _check_seq, seq=seq)

    async def _call(self, frame: dict[str, Any]) -> dict[str, Any]:
        return await self._write(
            frame,
            calls.call_for_check,
            lambda call: {"call": str(call.pk), "seq": call.seq},
            character_ids=frame.get("characters"),
            request=_object(frame, "request"),
        )

    async def _close_call(self, frame: dict[str, Any]) -> dict[str, Any]:
        call_id = frame.get("call")
        if not isinstance(call_id, str):
            raise InvalidInput("call", _("name the call by its id"))
        return await self._write(
            frame, calls.close_call, lambda _: {"call": call_id}, call_id=call_id
        )

    async def _odds(self, frame: dict[str, Any]) -> dict[str, Any]:
        return await self._service(services.preview_odds, request=_object(frame, "request"))

    COMMANDS: dict[str, Callable[[LiveFeedConsumer, dict[str, Any]], Awaitable[Any]]] = {
        "ping": _ping,
        "resume": _resume,
        "fetch": _fetch,
        "roll": _roll,
        "dramatic_failure": _dramatic_failure,
        "fortune": _fortune,
        "extra_nice": _extra_nice,
        "reveal": _reveal,
        "call": _call,
        "close_call": _close_call,
        "odds": _odds,
    }

    async def feed_revoked(self, message: dict[str, Any]) -> None:
        """The user signed out, changed their password or revoked their token."""
        await self._close(CLOSE_NOT_AUTHENTICATED)

    async def _service(self, service: Callable[..., Any], **kwargs: Any) -> Any:
        def run() -> Any:
            campaign = Campaign.objects.get(pk=self.campaign_id)
            return service(campaign=campaign, actor=self.user, **kwargs)

        return await _database(run)()

    async def _write(
        self,
        frame: dict[str, Any],
        service: Callable[..., Any],
        render: Callable[[Any], dict[str, Any]],
        **kwargs: Any,
    ) -> dict[str, Any]:
        """A write through `service`, in one of the campaign's writer slots (REST's); with a
        `request_id`, at most once (a repeat gets the first result; campaign/idempotency.py)."""
        scope = None
        if "request_id" in frame:
            asked = {k: v for k, v in frame.items() if k not in ("ref", "request_id")}
            scope = idempotency.Scope(
                user_id=self.user.pk,
                campaign_id=self.campaign_id,
                key=idempotency.check_key("request_id", frame["request_id"], idempotency.SOCKET),
                fingerprint=idempotency.fingerprint(
                    "socket", json.dumps(asked, sort_keys=True, default=str)
                ),
                channel=idempotency.SOCKET,
            )

        def attempt() -> dict[str, Any]:
            if scope is not None and (earlier := idempotency.earlier_answer(scope, "request_id")):
                return earlier.body
            campaign = Campaign.objects.get(pk=self.campaign_id)
            data = render(service(campaign=campaign, actor=self.user, **kwargs))
            if scope is not None:
                idempotency.record(scope, idempotency.Answer(200, data))
            return data

        def run(waited: float) -> dict[str, Any]:
            with writer_slot(self.campaign_id, waited=waited):
                return attempt() if scope is None else idempotency.once(attempt)

        async with _writer_turn(self.campaign_id) as waited:
            return await _database(run)(waited)

    # --- sending ---------------------------------------------------------------------------

    @property
    def _is_gm(self) -> bool:
        return self.membership is not None and self.membership.role == Role.GM

    def _after_from_query(self) -> tuple[int | None, str | None, InvalidInput | None]:
        """``after=<seq>`` or ``after=<seq>:<hash>`` (a witness: the hash it saw for seq)."""
        values = parse_qs(self.scope.get("query_string", b"").decode("latin1")).get("after")
        if not values:
            return None, None, None
        try:
            seq, witness = parse_after(values[-1])
        except InvalidInput as problem:
            return None, None, problem
        return seq, witness, None

    async def _witness_holds(self, seq: int, witness: str) -> bool:
        return await _database(chain_holds)(self.campaign_id, seq, witness)

    async def _history_changed(self, seq: int, witness: str, head: int, ref: Any = None) -> None:
        """The log no longer has what this client saw (a restored backup, a rewrite): say so
        with a frame of its own, so that the page can warn its user and start afresh."""
        await self._send_json(
            {
                "type": "history_changed",
                "ref": ref,
                "seq": seq,
                "hash": witness,
                "head": head,
                "message": f"the log no longer holds event #{seq} with the hash this client saw",
            }
        )

    async def _error(self, ref: Any, error: DomainError) -> None:
        frame = {
            "type": "error",
            "ref": ref,
            "field": error.field,
            "message": error.message,
            "code": error.code,
            **error.details,
        }
        if len(error.errors) > 1:  # a sheet with several bad fields: all of them, as in REST
            frame["errors"] = error.errors
        if isinstance(error, Throttled):
            frame["retry_after"] = error.retry_after
        await self._send_json(frame)

    async def _send_json(self, content: dict[str, Any]) -> None:
        await self._send_text(json.dumps(content, separators=(",", ":")))

    async def _send_text(self, text: str) -> None:
        async with self._send_lock:
            if self.closed:
                return
            try:
                await self.send(text_data=text)
            except OSError:  # the client has gone (uvicorn's ClientDisconnected): stop sending
                self.closed = True
            except RuntimeError:  # the server has closed it already (the client said goodbye)
                self.closed = True

    async def _close(self, code: int) -> None:
        async with self._send_lock:
            if not self.closed:
                self.closed = True
                await self.close(code)


def _retrieved(future: asyncio.Future) -> None:
    """A page read ahead for a socket that no longer wants it: its outcome is nobody's."""
    if not future.cancelled():
        future.exception()


def _check_seq(check: Any) -> dict[str, int]:
    return {"check": check.seq}


def language_of(scope: dict[str, Any]) -> str:
    """The socket's language, chosen as Django chooses a page's: the language cookie, then
    Accept-Language, then the site's default."""
    cookie = (scope.get("cookies") or {}).get(settings.LANGUAGE_COOKIE_NAME)
    candidates = [cookie] if cookie else []
    headers = dict(scope.get("headers") or [])
    accept = headers.get(b"accept-language", b"").decode("latin1")
    candidates += [code for code, _q in parse_accept_lang_header(accept) if code != "*"]
    for code in candidates:
        try:
            return get_supported_language_variant(code)
        except LookupError:
            continue
    return settings.LANGUAGE_CODE


def _membership_and_head(campaign_id: int, user: Any) -> tuple[Membership, int, str] | None:
    """The user's membership and the campaign's head, read in one statement (one snapshot)."""
    membership = (
        Membership.objects.filter(campaign_id=campaign_id, user_id=user.pk)
        .select_related("campaign")
        .first()
    )
    if membership is None:
        return None
    return membership, membership.campaign.head_seq, membership.campaign.head_hash


def _head_of(campaign_id: int) -> tuple[int, str]:
    head = Campaign.objects.filter(pk=campaign_id).values_list("head_seq", "head_hash").first()
    return head or (0, "")


def _describe(campaign_id: int, online: dict[int, int]) -> list[dict[str, Any]]:
    members = Membership.objects.filter(campaign_id=campaign_id, user_id__in=list(online))
    return sorted(
        (
            {
                "user_id": m.user_id,
                "username": m.user.get_username(),
                "role": m.role,
                "connections": online[m.user_id],
            }
            for m in members.select_related("user")
        ),
        key=lambda member: member["username"],
    )
