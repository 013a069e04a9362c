"""A bound on the writers of one campaign that one process lets wait on the database at a time.

Writes to a campaign queue on its stream lock anyway, so letting more than a couple wait there
buys nothing; each waiter would hold a pooled connection, and a stuck or hot campaign would drain
the pool for every other campaign and for /health/. The rest wait here, holding no connection,
for at most DB_LOCK_TIMEOUT_SECONDS, and are then answered "busy".
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connection

from config.outage import Busy

_slots: dict[int, threading.BoundedSemaphore] = {}
_slots_lock = threading.Lock()


def _slot_of(campaign_id: int) -> threading.BoundedSemaphore:
    with _slots_lock:
        slot = _slots.get(campaign_id)
        if slot is None:
            slot = _slots[campaign_id] = threading.BoundedSemaphore(settings.WRITERS_PER_CAMPAIGN)
        return slot


@contextmanager
def writer_slot(campaign_id: int | None) -> Iterator[None]:
    """Hold one of the campaign's writer slots (no bound for writes about no one campaign)."""
    if campaign_id is None:
        yield
        return
    slot = _slot_of(campaign_id)
    if not slot.acquire(blocking=False):
        if not connection.in_atomic_block:
            connection.close()  # wait without a connection: give it back to the pool
        if not slot.acquire(timeout=settings.DB_LOCK_TIMEOUT_SECONDS):
            raise Busy(f"campaign {campaign_id}: no writer slot within the lock timeout")
    try:
        yield
    finally:
        slot.release()
