"""The connection pool's check of a connection before it hands it to a request."""

from __future__ import annotations

import select

from psycopg import Connection
from psycopg_pool import ConnectionPool


def check_when_told(conn: Connection) -> None:
    """Raise if ``conn`` can no longer be used, asking the server only when it has said something.

    An idle connection's server ends it out loud: a shutdown's or `pg_terminate_backend`'s
    FATAL, then the socket's EOF, and the EOF alone when a backend dies. A peer that forgot the
    connection without closing it (a server host rebooted, a failover's address moved, a NAT's
    table flushed) answers only the next packet, with a reset: TCP keepalives
    (config/settings.py) send that packet within a minute of idleness, and the reset makes the
    socket report an error. So a socket with nothing to report is one a round trip (Django's
    check with CONN_HEALTH_CHECKS: 110 µs of CPU and 0.2 ms, some 3 % of a check) would find
    alive too, unless its peer forgot it in the last 30 s (the request's first statement then
    fails, 503, and the connection is dropped); this poll costs 1-2 µs.
    Anything the socket does report (a notification too) gets the round trip. The pool hands
    out idle connections only (it rolls back or drops one that comes back otherwise), and a
    closed one has no socket: `fileno` raises, which the pool takes as a failed check.
    """
    if _readable(conn.fileno()):
        ConnectionPool.check_connection(conn)  # raises when the connection is gone


def _readable(fd: int) -> bool:
    poller = select.poll()  # not select.select: a busy server's descriptors pass 1024
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))  # POLLHUP and POLLERR are reported as well
