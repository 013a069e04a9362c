"""Writes per user, counted in the cache (shared through Redis when there are several processes),
for the REST API and the socket's commands alike: a fixed window of WRITE_RATE ("120/min")."""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import cache
from rest_framework.permissions import SAFE_METHODS
from rest_framework.throttling import BaseThrottle

logger = logging.getLogger("accounts.throttles")

PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600}


def _rate() -> tuple[int, int]:
    count, _, period = settings.WRITE_RATE.partition("/")
    return int(count), PERIODS[period]


def write_wait(user_id: int) -> int | None:
    """Count one write by the user; None if allowed, else the seconds until the next window.
    Without the cache (Redis down) every write is allowed: play goes on, unthrottled."""
    try:
        return _count_write(user_id)
    except Exception as error:
        logger.warning("write throttle unavailable, not throttling: %s", error)
        return None


def _count_write(user_id: int) -> int | None:
    limit, period = _rate()
    now = time.time()
    key = f"writes:{user_id}:{int(now // period)}"
    # The window's counter exists for every write but the window's first: incremented in one
    # operation, not added first each time (on Redis an add is a round trip of its own).
    try:
        count = cache.incr(key)
    except ValueError:  # the window's first write
        count = 1 if cache.add(key, 1, timeout=period + 1) else cache.incr(key)
    if count <= limit:
        return None
    return max(1, int(period - now % period) + 1)


class WriteThrottle(BaseThrottle):
    wait_seconds: int | None = None

    def allow_request(self, request, view) -> bool:
        if request.method in SAFE_METHODS or not request.user.is_authenticated:
            return True  # reads are cheap; sign-in has its own lockout (django-axes)
        self.wait_seconds = write_wait(request.user.pk)
        return self.wait_seconds is None

    def wait(self) -> float | None:
        return self.wait_seconds


class FrameBucket:
    """Frames one socket may send: a burst of LIVE_FRAME_BURST, refilled at LIVE_FRAME_RATE a
    second. Per connection and in memory: it only has to stop a flood, cheaply."""

    def __init__(self) -> None:
        self.rate = float(settings.LIVE_FRAME_RATE)
        self.burst = float(settings.LIVE_FRAME_BURST)
        self.tokens = self.burst
        self.at = time.monotonic()

    def take(self) -> float | None:
        """None if the frame may go on, else the seconds until one may."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return None
        return (1 - self.tokens) / self.rate
