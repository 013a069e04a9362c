"""Django's PostgreSQL backend, with writes that ride with the COMMIT (eventlog/commit.py) and
times loaded by psycopg's C loader."""

from __future__ import annotations

from datetime import tzinfo
from functools import cache
from typing import Any

from django.db.backends.postgresql import base
from django.db.backends.utils import debug_transaction
from psycopg import adapt
from psycopg._cmodule import _psycopg  # psycopg's C build (binary or c), None without one
from psycopg_pool import ConnectionPool

from eventlog import commit
from eventlog.backends.postgresql.liveness import check_when_told


class _TimestamptzLoader(adapt.Loader):
    """Django's timestamptz loader (`psycopg_any.BaseTzLoader`: psycopg's, then the connection's
    time zone put in its place) on psycopg's C loader: Django's extends the pure-Python one,
    which parses each value in Python (9.5 against 2.2 µs a value, 2026-12-06), and the C one
    cannot be extended."""

    timezone: tzinfo | None = None

    def __init__(self, oid: int, context: adapt.AdaptContext | None = None) -> None:
        super().__init__(oid, context)
        self._load = _psycopg.TimestamptzLoader(oid, context).load

    def load(self, data: Any) -> Any:
        return self._load(data).replace(tzinfo=self.timezone)


@cache  # one map per (Django's map, zone), as Django keeps one per zone
def _adapters(template: adapt.AdaptersMap, timezone: tzinfo | None) -> adapt.AdaptersMap:
    """Django's adapters map for a connection with the C-based timestamptz loader in it, on
    the zone Django's own was made for (`create_cursor` compares that `timezone`)."""
    adapters = adapt.AdaptersMap(template)
    loader = type("SpecificTzLoader", (_TimestamptzLoader,), {"timezone": timezone})
    adapters.register_loader("timestamptz", loader)
    return adapters


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queued_writes: list[commit.Queued] = []
        self.execute_wrappers.append(self._send_queued_first)

    @property
    def pool(self) -> Any:
        """Django's pool, its check (CONN_HEALTH_CHECKS) a look at the socket instead of a round
        trip per request (`check_when_told`). Django names its own check when it makes the pool,
        not yet opened, and takes no other; psycopg_pool keeps it as `_check`
        (tests/eventlog/test_pool_check.py fails if that changes)."""
        pool = super().pool
        if pool is not None and pool._check is ConnectionPool.check_connection:
            pool._check = check_when_told
        return pool

    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        if _psycopg is not None and "context" in params:
            params["context"] = _adapters(params["context"], self.timezone)
        return params

    def _send_queued_first(self, execute, sql, params, many, context):
        if self.queued_writes:
            self.send_queued_writes()
        return execute(sql, params, many, context)

    def send_queued_writes(self) -> None:
        with self.wrap_database_errors:
            commit.send(self)

    def _commit(self) -> None:
        if not self.queued_writes or self.connection is None:
            return super()._commit()
        with debug_transaction(self, "COMMIT"), self.wrap_database_errors:
            commit.send(self, commit=True)

    def _rollback(self) -> None:
        self.queued_writes.clear()
        return super()._rollback()

    def _close(self) -> None:
        self.queued_writes.clear()
        return super()._close()
