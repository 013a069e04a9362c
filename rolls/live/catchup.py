"""Catch-up pages of the log, read and rendered once per class of viewer and shared.

A reconnect storm (a restart: every page reconnects at once) has hundreds of sockets asking the
same process for the same ranges of one campaign's log. A page is read once per range and state
of the log, presented once per class of viewer (`rolls.reads.present.SharedPage`: the GMs, the
owner of the roll's character, who sees it, who gets the stub) and kept as each event's JSON, so
the next socket of that class over that range only joins strings.

Pages are aligned on multiples of PAGE (a socket resuming after seq 437 is sent 438 to 600 from
the page of 401 to 600), so sockets that start at different seqs share their pages too. A long
catch-up crosses whole stretches of LONG_PAGES pages (1 to 1,000, 1,001 to 2,000…) as one page
each: each page costs its statements and its hop to the reading thread, which made a tenth of
a 10,000-event catch-up's time (#17), while a socket resuming near the head still presents no
more than PAGE events to send the few it missed. A page goes out in frames of at most
FRAME_BYTES. On PostgreSQL, the next page's rows are read on a thread of their own while a page
is presented (`_read_ahead`). A page is keyed by the campaign's head (seq and hash) as the socket
last read it, and presented as the log stood then or later: every change of what a page shows
(a reveal, a follow-up taken, a role changed, a chapter ended) is an event, so a new head
retires the pages read before it (and the socket is sent that event after the page, as a
connected one is), and a log restored from an older backup, whose head has another hash, never
meets the pages of the log it replaced. A kept page is sent without a database call
(`kept_page`, on the event loop). The cache is bounded by pages (KEPT rendered pages, READ_KEPT
pages of events, AHEAD_KEPT read ahead): a long page of 1,000 events took 2.0 MB rendered and
2.2 MB read (docs/operations.md), some 45 MB at most in all.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from django.db import close_old_connections, connection

from campaign.models import Campaign, Membership, Role
from eventlog.event_types import MEMBER_LEFT, MEMBER_ROLE_CHANGED
from eventlog.recorders import recorder
from rolls.checks import eligibility
from rolls.live.broadcast import pool_size
from rolls.reads.page_checks import CheckRow, checks_of
from rolls.reads.present import SharedPage

logger = logging.getLogger("rolls.live")

PAGE = 200  # events per catch-up page near where a catch-up starts and ends
LONG_PAGES = 5  # pages a stretch read and presented whole as one page holds
# A frame's bytes at most: a long page is sent as several frames. Clients cap a message (Python's
# websockets at 1 MiB by default, and a page of 1,000 checks is more), browsers do not.
FRAME_BYTES = 512 * 1024
KEPT = 16  # rendered pages kept per process (each a page's JSON for one class of viewer)
READ_KEPT = 4  # pages of events kept per process, to present for another class
CLASSES_KEPT = 4096  # the class of a viewer on a kept page (a few dozen bytes each)
AHEAD_KEPT = 2  # pages read ahead and not yet asked for; none is read ahead while they wait
AHEAD_KEPT_SECONDS = 10.0  # then one not asked for is dropped (its socket closed, or moved on)
# How long a socket waits for its page from the reader before reading it itself (a page takes
# tens of milliseconds; the reader may be waiting for a pooled connection).
AHEAD_PATIENCE_SECONDS = 1.0


@dataclass(frozen=True)
class Rendered:
    """A page as one class of viewer is shown it: each event's seq, JSON, and the member an
    event about a membership (role changed, left) concerns when the viewer may see it."""

    seqs: tuple[int, ...]
    texts: tuple[str, ...]
    subjects: tuple[int | None, ...]


@dataclass(frozen=True)
class Page:
    """What a socket sends: the frames' texts (`events` frames of at most FRAME_BYTES, but for
    an event larger on its own), the last seq in them, and whether they end with an event about
    this socket's own membership (the socket re-reads its membership after it)."""

    frames: tuple[str, ...]
    last: int
    about_me: bool


Head = tuple[int, str]  # a campaign's head: (seq, hash)

_lock = threading.Lock()
_read: OrderedDict[tuple[int, int, int, int, str], SharedPage] = OrderedDict()
_rendered: OrderedDict[tuple[int, int, int, int, str, Hashable], Rendered] = OrderedDict()
# The table as of a head (the campaign, its open periods, characters, dramatic failures taken):
# read once for the pages of a catch-up, which it is the same for, as a page is (a change of any
# of it is an event, which moves the head).
NOWS_KEPT = 4
_nows: OrderedDict[tuple[int, int, str], eligibility.Now] = OrderedDict()
# The actors' usernames the pages of a catch-up have read, as of a head, as the table is: each
# page reads only the actors no page before it named (a page read them all, once per page).
_names: OrderedDict[tuple[int, int, str], dict[int, str]] = OrderedDict()
# The next page of a catch-up, read (its events and their check rows) on a thread and a pooled
# connection of its own while this one is presented: the database works in its own
# process meanwhile (#17). One page at a time per process: a second reader was no faster on two
# cores, and took one more connection.
_ahead: OrderedDict[tuple[int, int, int, int, str], tuple[Future, float]] = OrderedDict()
_ahead_reader = ThreadPoolExecutor(1, thread_name_prefix="catchup-ahead")
# A viewer's class on a page, as it was found (a player's needs the page's checks read).
_classes: OrderedDict[tuple[int, int, int, int, str, int, str], Hashable] = OrderedDict()


def kept_page(membership: Membership, after: int, until: int, head: Head) -> Page | None:
    """The next page of (after, until] when it is kept already: no database, so the event
    loop's thread may call it. None when it has to be read (`page_after`)."""
    read_key = _read_key(membership.campaign_id, after, until, head)
    if read_key is None:
        return None
    with _lock:
        viewer_class = (
            "gm" if membership.role == Role.GM else _classes.get(_class_key(read_key, membership))
        )
        rendered = _rendered.get((*read_key, viewer_class)) if viewer_class is not None else None
        if rendered is not None:
            _rendered.move_to_end((*read_key, viewer_class))
    return None if rendered is None else _slice(rendered, after, membership.user_id)


def page_after(membership: Membership, after: int, until: int, head: Head) -> Page | None:
    """The next page of (after, until] as ``membership`` may see it; None when there is none.
    ``head`` is the campaign's head as the caller read it last: the page is presented as the
    log stood then, or later.

    Runs in a worker thread (it reads the database)."""
    read_key = _read_key(membership.campaign_id, after, until, head)
    if read_key is None:
        return None
    with _lock:
        shared = _read.get(read_key)
        if shared is not None:
            _read.move_to_end(read_key)
    if shared is None:
        with _lock:
            ahead = _ahead.pop(read_key, None)
        events, checks = _page_rows(read_key) if ahead is None else _taken(ahead[0], read_key)
        # The next page is asked for once this one is in: a page read here (a catch-up's first)
        # then has no read of the next beside it on the same cores. One being read ahead would
        # have had the next queued behind it on the one reader anyway.
        if _reads_ahead():
            _read_ahead(membership.campaign_id, read_key[2], until, head)
        names = _names_at(membership.campaign_id, head)
        shared = SharedPage(events, lambda: _now_at(membership.campaign_id, head), names, checks)
        names.update(shared.names)
        _keep(_read, read_key, shared, READ_KEPT)
    viewer_class = shared.class_of(membership)
    _keep(_classes, _class_key(read_key, membership), viewer_class, CLASSES_KEPT)
    rendered_key = (*read_key, viewer_class)
    with _lock:
        rendered = _rendered.get(rendered_key)
        if rendered is not None:
            _rendered.move_to_end(rendered_key)
    if rendered is None:
        rendered = _render(shared, membership)
        _keep(_rendered, rendered_key, rendered, KEPT)
    return _slice(rendered, after, membership.user_id)


def _page_rows(read_key: tuple[int, int, int, int, str]) -> tuple[list, dict[int, CheckRow]]:
    """A page's events and their check rows: rows, not querysets (eventlog.recorders,
    rolls.reads.page_checks), no SQL compiled, no model instance."""
    campaign_id, start, end = read_key[:3]
    events = recorder().page(campaign_id, after=start, until=end, limit=end - start)
    return events, checks_of(events)


def _reads_ahead() -> bool:
    """Whether this thread's pages are read ahead: on PostgreSQL (SQLite reads in this process,
    under the same GIL), with a pool that keeps the reader a connection (`database_threads`;
    without one it would connect anew for every page), outside a transaction (the reader's
    connection sees only what is committed: a test's transaction, say, would be invisible)."""
    return (
        connection.vendor == "postgresql"
        and (pool_size() or 0) >= 3  # a socket's thread, the webhook sender's, the reader's
        and not connection.in_atomic_block
    )


def _read_ahead(campaign_id: int, after: int, until: int, head: Head) -> None:
    """Start reading the page after ``after`` unless it is kept or being read already, the
    reader is busy, or AHEAD_KEPT pages read ahead wait to be asked for (sockets catching up
    over other ranges take turns: none evicts another's page before it is asked for)."""
    read_key = _read_key(campaign_id, after, until, head)
    if read_key is None:
        return
    now = time.monotonic()
    with _lock:
        for key, (reading, began) in list(_ahead.items()):
            if now - began > AHEAD_KEPT_SECONDS:
                del _ahead[key]
                reading.cancel()
        if read_key in _read or read_key in _ahead or len(_ahead) >= AHEAD_KEPT:
            return
        if any(not reading.done() for reading, _ in _ahead.values()):
            return
        _ahead[read_key] = (_ahead_reader.submit(_rows_on_own_connection, read_key), now)


def _taken(ahead: Future, read_key: tuple[int, int, int, int, str]) -> tuple:
    """A page read ahead, or read here when the reader failed or keeps it waiting (its own
    connection may have broken, or the pool had none to give it: this thread's serves)."""
    try:
        return ahead.result(timeout=AHEAD_PATIENCE_SECONDS)
    except Exception as error:  # whatever the reader met, this thread reads the page itself
        ahead.cancel()
        logger.warning("catch-up: page %s read here (the reader: %r)", read_key[1:3], error)
        return _page_rows(read_key)


def _rows_on_own_connection(read_key: tuple[int, int, int, int, str]) -> tuple:
    """`_page_rows` on the reader's thread, whose connection goes back to the pool after (as a
    socket's database call's does: `rolls.live.consumers._database`)."""
    close_old_connections()
    try:
        return _page_rows(read_key)
    finally:
        close_old_connections()


def _now_at(campaign_id: int, head: Head) -> eligibility.Now:
    key = (campaign_id, *head)
    with _lock:
        now = _nows.get(key)
    if now is None:
        now = eligibility.Now(Campaign.objects.get(pk=campaign_id))
        _keep(_nows, key, now, NOWS_KEPT)
    return now


def _names_at(campaign_id: int, head: Head) -> dict[int, str]:
    key = (campaign_id, *head)
    with _lock:
        names = _names.get(key)
    if names is None:
        names = {}
        _keep(_names, key, names, NOWS_KEPT)
    return names


def _read_key(
    campaign_id: int, after: int, until: int, head: Head
) -> tuple[int, int, int, int, str] | None:
    start = after - after % PAGE
    stretch = PAGE * LONG_PAGES
    if start % stretch == 0 and until - start >= stretch:
        end = start + stretch  # a whole stretch, one page
    else:
        end = min(until, start + PAGE)
    return None if end <= after else (campaign_id, start, end, *head)


def _class_key(read_key: tuple, membership: Membership) -> tuple:
    return (*read_key, membership.user_id, membership.role)


def _render(shared: SharedPage, membership: Membership) -> Rendered:
    shown = shared.texts_for(membership)
    return Rendered(
        seqs=tuple(event.seq for event in shared.events),
        texts=tuple(text for text, _ in shown),
        subjects=tuple(
            event.payload.get("user_id")
            if event.type in (MEMBER_ROLE_CHANGED, MEMBER_LEFT) and in_full
            else None
            for event, (_, in_full) in zip(shared.events, shown, strict=True)
        ),
    )


def _slice(rendered: Rendered, after: int, user_id: int) -> Page | None:
    """The events after ``after``, up to and including the first one about this member, in
    frames of at most FRAME_BYTES (an event larger on its own goes alone)."""
    first = next((n for n, seq in enumerate(rendered.seqs) if seq > after), None)
    if first is None:
        return None
    last = len(rendered.seqs)
    about_me = False
    for n in range(first, last):
        if rendered.subjects[n] == user_id:
            last, about_me = n + 1, True
            break
    # A text is ASCII (json.dumps escapes; a stored payload goes in only when it is ASCII), so
    # its length is its bytes.
    frames: list[str] = []
    start, size = first, _ENVELOPE
    for n, text in enumerate(rendered.texts[first:last], first):
        size += len(text) + 1  # and its comma
        if size > FRAME_BYTES and n > start:
            frames.append(_frame(rendered.texts[start:n]))
            start, size = n, _ENVELOPE + len(text) + 1
    frames.append(_frame(rendered.texts[start:last]))
    return Page(frames=tuple(frames), last=rendered.seqs[last - 1], about_me=about_me)


def _frame(texts: tuple[str, ...]) -> str:
    return '{"type":"events","events":[' + ",".join(texts) + "]}"


_ENVELOPE = len(_frame(()))


def _keep(cache: OrderedDict, key: tuple, value: object, size: int) -> None:
    with _lock:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > size:
            cache.popitem(last=False)


def forget() -> None:
    """Drop every kept page (tests)."""
    with _lock:
        for ahead, _ in _ahead.values():
            ahead.cancel()
        _ahead.clear()
        _read.clear()
        _nows.clear()
        _names.clear()
        _rendered.clear()
        _classes.clear()
