"""The connection pool's check of a connection before it hands it to a request."""

from __future__ import annotations

import select

from psycopg import Connection
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool


def check_when_told(conn: Connection) -> None:
    """Raise if ``conn`` can no longer be used, asking the server only when it has said something.

    An idle connection hears nothing from its server but its end: a shutdown's or
    `pg_terminate_backend`'s FATAL, then the socket's EOF, and the socket's EOF alone when a
    backend dies. While the socket has nothing to read, a round trip (Django's check with
    CONN_HEALTH_CHECKS: 110 µs of CPU and 0.2 ms, some 3 % of a check) would find the connection
    as alive as this poll does (1-2 µs). A server host gone without closing is caught by
    neither: the round trip would wait for TCP to give up.
    """
    if conn.info.transaction_status != TransactionStatus.IDLE or _readable(conn.fileno()):
        ConnectionPool.check_connection(conn)  # raises when the connection is gone


def _readable(fd: int) -> bool:
    poller = select.poll()  # not select.select: a busy server's descriptors pass 1024
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))  # POLLHUP and POLLERR are reported as well
