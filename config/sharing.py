"""A warning at start when server processes share one SQLite file without Redis.

Without Redis each process has its own in-memory channel layer, so a roll made through one process
reaches sockets on another only when their heartbeat catches up from the log (LIVE_HEARTBEAT_SECONDS
later), and SQLite serialises every write across them. Each server process leaves a pid file in
var/servers/ while it runs; one that finds another live process on the same file says so.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
from pathlib import Path

from django.conf import settings

logger = logging.getLogger("config.sharing")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def warn_if_sqlite_is_shared() -> list[int]:
    """Register this process; warn (and return their pids) if others serve the same file."""
    database = settings.DATABASES["default"]
    if "sqlite" not in database["ENGINE"] or settings.REDIS_URL:
        return []
    directory = settings.VAR_DIR / "servers"
    directory.mkdir(parents=True, exist_ok=True)
    mine = directory / str(os.getpid())
    name = str(Path(database["NAME"]).resolve())
    mine.write_text(name)
    atexit.register(lambda: mine.unlink(missing_ok=True))
    others = []
    for entry in directory.iterdir():
        if not entry.name.isdigit() or entry == mine:
            continue
        if not _alive(int(entry.name)):
            with contextlib.suppress(OSError):
                entry.unlink()
            continue
        with contextlib.suppress(OSError):
            if entry.read_text() == name:
                others.append(int(entry.name))
    if others:
        logger.warning(
            "%d other server process(es) (%s) use the SQLite file %s without Redis: live events "
            "reach their sockets only by heartbeat (LIVE_HEARTBEAT_SECONDS) and writes queue on "
            "one file lock. Set REDIS_URL, or run one process.",
            len(others),
            ", ".join(map(str, sorted(others))),
            name,
        )
    return others
