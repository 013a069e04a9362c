"""A bound on the writers of one campaign that one process lets wait on the database at a time.

Writes to a campaign queue on its stream lock anyway, so letting more than a couple wait there
buys nothing; each waiter would hold a pooled connection, and a stuck or hot campaign would drain
the pool for every other campaign and for /health/. The rest wait here, holding no connection.
Waiting here and waiting for the lock share one budget, DB_LOCK_TIMEOUT_SECONDS: past it, the
request is answered "busy" (config/outage.py turns `Busy` into a 503).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connection


class Busy(Exception):
    """A write waited its whole budget for a writer slot of its campaign."""


_slots: dict[int, threading.BoundedSemaphore] = {}
_slots_lock = threading.Lock()
MIN_LOCK_WAIT = 0.05  # seconds: a request that used its budget in the queue still tries once


def _slot_of(campaign_id: int) -> threading.BoundedSemaphore:
    with _slots_lock:
        slot = _slots.get(campaign_id)
        if slot is None:
            slot = _slots[campaign_id] = threading.BoundedSemaphore(settings.WRITERS_PER_CAMPAIGN)
        return slot


@contextmanager
def writer_slot(campaign_id: int | None, *, waited: float = 0.0) -> Iterator[None]:
    """Hold one of the campaign's writer slots (no bound for writes about no one campaign).
    `waited`: seconds the write already queued for its turn (a socket's, on the event loop:
    rolls/live/consumers.py), taken from its one budget."""
    if campaign_id is None:
        yield
        return
    slot = _slot_of(campaign_id)
    budget = settings.DB_LOCK_TIMEOUT_SECONDS
    if not slot.acquire(blocking=False):
        if not connection.in_atomic_block:
            connection.close()  # wait without a connection: give it back to the pool
        began = time.monotonic()
        if not slot.acquire(timeout=max(budget - waited, MIN_LOCK_WAIT)):
            raise Busy(f"campaign {campaign_id}: no writer slot within the lock timeout")
        waited += time.monotonic() - began
    try:
        if waited:
            with _lock_wait(max(budget - waited, MIN_LOCK_WAIT)):
                yield
        else:
            yield
    finally:
        slot.release()


@contextmanager
def _lock_wait(seconds: float) -> Iterator[None]:
    """The rest of the budget as this connection's lock wait, for this request only."""
    milliseconds = int(seconds * 1000)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(f"SET lock_timeout = {milliseconds}")
            reset = "RESET lock_timeout"
        else:
            cursor.execute(f"PRAGMA busy_timeout = {milliseconds}")
            reset = f"PRAGMA busy_timeout = {int(settings.DB_LOCK_TIMEOUT_SECONDS * 1000)}"
    try:
        yield
    finally:
        with contextlib.suppress(DatabaseError), connection.cursor() as cursor:
            cursor.execute(reset)
