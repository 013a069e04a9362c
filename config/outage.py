"""What a database error means for the client, and whether the database is known to be down.

Three answers, each a 503 with Retry-After and its own `code`, because the client's remedy differs:
- `busy`: the database is up but this request waited too long (a campaign's lock, a statement
  timeout, SQLite's write lock, no free pooled connection): retry the same request shortly.
- `too_many_connections`: PostgreSQL refused a connection (`max_connections`): the operator must
  size the pool (README "Failure and load"); retrying helps once load drops.
- `unavailable`: the database cannot be reached. While it is known down, requests are answered at
  once from here instead of each waiting for a connection; a probe (a fresh connection outside the
  pool, at most one in flight, bounded by a second) finds out when it is back.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass

from django.db import InterfaceError, OperationalError, connection
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from eventlog.writers import Busy

PROBE_SECONDS = 0.9  # a probe that takes longer counts as "down"; /health/ answers within 1 s
PROBE_EVERY = 0.5  # while down, probe at most this often (the rest are answered from memory)

# PostgreSQL SQLSTATEs (Appendix A of its manual)
_BUSY_STATES = {
    "55P03",  # lock_not_available: lock_timeout
    "57014",  # query_canceled: statement_timeout
    "40P01",  # deadlock_detected
    "40001",  # serialization_failure
}
_TOO_MANY_STATES = {"53300"}  # too_many_connections


@dataclass(frozen=True)
class Refusal:
    code: str
    message: Promise  # in the language of whoever is answered: str() it then
    retry_after: int


BUSY = Refusal("busy", _("this campaign is busy; try the same request again in a moment"), 1)
TOO_MANY = Refusal(
    "too_many_connections",
    _("the database refused a connection (too many clients); try again in a moment"),
    2,
)
UNAVAILABLE = Refusal("unavailable", _("the database is unavailable; try again in a moment"), 5)


def refusal_for(error: BaseException) -> Refusal | None:
    """The answer for an error raised while serving a request, or None if it is not ours."""
    if isinstance(error, Busy):
        return BUSY
    if not isinstance(error, OperationalError | InterfaceError):
        return None
    cause = error.__cause__
    state = getattr(cause, "sqlstate", None)
    if state in _BUSY_STATES or _is_sqlite_busy(cause):
        return BUSY
    if state in _TOO_MANY_STATES or "too many clients" in str(error):
        return TOO_MANY
    if _is_pool_timeout(cause):
        # The pool waited for a connection: the database is either slow to hand them out (busy)
        # or gone; only a probe tells the two apart.
        return BUSY if database_answers() else _down()
    return _down()


def _down() -> Refusal:
    state.mark_down()
    return UNAVAILABLE


def _is_sqlite_busy(cause: BaseException | None) -> bool:
    return isinstance(cause, sqlite3.OperationalError) and "locked" in str(cause)


def _is_pool_timeout(cause: BaseException | None) -> bool:
    # PoolClosed: the pool was replaced (below) while this request waited for it.
    return type(cause).__name__ in ("PoolTimeout", "PoolClosed")


def _renew_pool() -> None:
    """The database is back: start a new pool. The old one would reconnect only on its backoff
    schedule (1, 2, 4 … s after the outage began), keeping requests waiting for seconds.

    Django's `close_pool()` closes the old pool first, which waits for its workers (up to 5 s,
    while they sleep between reconnection attempts) with the old pool still in place; so the old
    one is unhooked from Django's registry (a class attribute) at once and closed aside."""
    if connection.vendor != "postgresql" or connection.pool is None:
        return
    old = type(connection)._connection_pools.pop(connection.alias, None)
    if old is not None:
        threading.Thread(target=old.close, daemon=True).start()


class _State:
    """Per process: is the database known down, and the one probe in flight."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.down = False
        self._checked_at = 0.0
        self._answer = True
        self._probe: threading.Thread | None = None

    def mark_down(self) -> None:
        with self._lock:
            self.down = True
            self._checked_at = time.monotonic()
            self._answer = False

    def answers(self, max_age: float) -> bool:
        """Does the database answer? A fresh probe unless one ran within `max_age` seconds."""
        with self._lock:
            if time.monotonic() - self._checked_at < max_age:
                return self._answer
            probe = self._probe
            if probe is None or not probe.is_alive():
                probe = self._probe = threading.Thread(target=self._run_probe, daemon=True)
                probe.start()
        probe.join(PROBE_SECONDS)
        with self._lock:
            if probe.is_alive():  # hanging (a frozen server): down, and the probe keeps trying
                self.down, self._answer, self._checked_at = True, False, time.monotonic()
            return self._answer

    def _run_probe(self) -> None:
        ok = _probe_once()
        with self._lock:
            was_down = self.down
            self._answer, self.down, self._checked_at = ok, not ok, time.monotonic()
        if ok and was_down:
            _renew_pool()


state = _State()


def database_answers(max_age: float = 0.25) -> bool:
    return state.answers(max_age)


def known_down() -> bool:
    """True while the database is down, as far as this process knows (re-probed every 0.5 s)."""
    return state.down and not state.answers(PROBE_EVERY)


def _probe_once() -> bool:
    """Open a fresh connection (never the pool's: it may be drained) and run SELECT 1."""
    try:
        if connection.vendor == "sqlite":
            with sqlite3.connect(connection.settings_dict["NAME"], timeout=PROBE_SECONDS) as db:
                db.execute("SELECT 1")
            return True
        import psycopg

        params = connection.get_connection_params()
        params.pop("pool", None)
        params["connect_timeout"] = 2  # libpq's floor; the caller stops waiting after 0.9 s
        with psycopg.connect(**params) as db:
            db.execute("SELECT 1")
        return True
    except Exception:  # whatever went wrong, the database does not answer
        return False
