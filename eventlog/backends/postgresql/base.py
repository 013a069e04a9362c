"""Django's PostgreSQL backend, with writes that ride with the COMMIT (eventlog/commit.py)."""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base
from django.db.backends.utils import debug_transaction

from eventlog import commit


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queued_writes: list[commit.Queued] = []
        self.execute_wrappers.append(self._send_queued_first)

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
