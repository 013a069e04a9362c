"""Catch-up pages of the log, read and rendered once per class of viewer and shared.

A reconnect storm (a restart: every page reconnects at once) has hundreds of sockets asking the
same process for the same ranges of one campaign's log. A page is read once per range and state
of the log, presented once per class of viewer (`rolls.reads.present.SharedPage`: the GMs, the
owner of the roll's character, who sees it, who gets the stub) and kept as each event's JSON, so
the next socket of that class over that range only joins strings.

Pages are aligned on multiples of PAGE (a socket resuming after seq 437 is sent 438 to 600 from
the page of 401 to 600), so sockets that start at different seqs share their pages too. A
page is keyed by the campaign's head (seq and hash) when it was read: every change of what a
page shows (a reveal, a follow-up taken, a role changed, a chapter ended) is an event, so a new
head retires the pages read before it, and a log restored from an older backup, whose head
has another hash, never meets the pages of the log it replaced. The cache is small and bounded
(KEPT rendered pages, READ_KEPT pages of events).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

from campaign.models import Campaign, Event, Membership
from eventlog.event_types import MEMBER_LEFT, MEMBER_ROLE_CHANGED
from rolls.reads.present import SharedPage

PAGE = 200  # events per catch-up frame
KEPT = 16  # rendered pages kept per process (each a page's JSON for one class of viewer)
READ_KEPT = 4  # pages of events kept per process, to present for another class


@dataclass(frozen=True)
class Rendered:
    """A page as one class of viewer is shown it: each event's seq, JSON, and the member an
    event about a membership (role changed, left) concerns when the viewer may see it."""

    seqs: tuple[int, ...]
    texts: tuple[str, ...]
    subjects: tuple[int | None, ...]


@dataclass(frozen=True)
class Page:
    """What a socket sends: the frame's text, the last seq in it, and whether it ends with an
    event about this socket's own membership (the socket re-reads its membership after it)."""

    text: str
    last: int
    about_me: bool


_lock = threading.Lock()
_read: OrderedDict[tuple[int, int, int, int, str], SharedPage] = OrderedDict()
_rendered: OrderedDict[tuple[int, int, int, int, str, Hashable], Rendered] = OrderedDict()


def page_after(membership: Membership, after: int, until: int) -> Page | None:
    """The next page of (after, until] as ``membership`` may see it; None when there is none.

    Runs in a worker thread (it reads the database)."""
    campaign_id = membership.campaign_id
    start = after - after % PAGE
    end = min(until, start + PAGE)
    if end <= after:
        return None
    head = Campaign.objects.filter(pk=campaign_id).values_list("head_seq", "head_hash").first()
    read_key = (campaign_id, start, end, *(head or (0, "")))
    with _lock:
        shared = _read.get(read_key)
        if shared is not None:
            _read.move_to_end(read_key)
    if shared is None:
        events = list(
            Event.objects.filter(campaign_id=campaign_id, seq__gt=start, seq__lte=end).order_by(
                "seq"
            )
        )
        shared = SharedPage(events)
        _keep(_read, read_key, shared, READ_KEPT)
    rendered_key = (*read_key, shared.class_of(membership))
    with _lock:
        rendered = _rendered.get(rendered_key)
        if rendered is not None:
            _rendered.move_to_end(rendered_key)
    if rendered is None:
        rendered = _render(shared, membership)
        _keep(_rendered, rendered_key, rendered, KEPT)
    return _slice(rendered, after, membership.user_id)


def _render(shared: SharedPage, membership: Membership) -> Rendered:
    shown = shared.for_member(membership)
    return Rendered(
        seqs=tuple(event["seq"] for event in shown),
        texts=tuple(json.dumps(event, separators=(",", ":")) for event in shown),
        subjects=tuple(
            event["payload"].get("user_id")
            if event["type"] in (MEMBER_ROLE_CHANGED, MEMBER_LEFT) and not event["redacted"]
            else None
            for event in shown
        ),
    )


def _slice(rendered: Rendered, after: int, user_id: int) -> Page | None:
    """The events after ``after``, up to and including the first one about this member."""
    first = next((n for n, seq in enumerate(rendered.seqs) if seq > after), None)
    if first is None:
        return None
    last = len(rendered.seqs)
    about_me = False
    for n in range(first, last):
        if rendered.subjects[n] == user_id:
            last, about_me = n + 1, True
            break
    text = '{"type":"events","events":[' + ",".join(rendered.texts[first:last]) + "]}"
    return Page(text=text, last=rendered.seqs[last - 1], about_me=about_me)


def _keep(cache: OrderedDict, key: tuple, value: object, size: int) -> None:
    with _lock:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > size:
            cache.popitem(last=False)


def forget() -> None:
    """Drop every kept page (tests)."""
    with _lock:
        _read.clear()
        _rendered.clear()
