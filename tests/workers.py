"""What sets one pytest-xdist worker's test process, and the servers it starts, apart from the
other workers' on the services they share."""

from __future__ import annotations

import os


def key_prefix() -> str:
    """The prefix of this worker's keys on a shared Redis (cache, channel groups, presence).

    Each worker's test database gives out the same ids as the others': without it one worker's
    page would hear another's campaign of the same id and count another's writes against its
    user (the throttle's counters are by user id)."""
    return f"test-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
