"""The pool hands a request a connection that works: one whose server ended it (a restart, an
administrator's `pg_terminate_backend`, a backend that died) is replaced first, and a quiet one
is handed out without a round trip (eventlog/backends/postgresql/liveness.py)."""

from __future__ import annotations

import os
import socket
import time

import psycopg
import pytest
from django.db import connection

from eventlog.backends.postgresql.liveness import check_when_told
from tests.live.conftest import database_url

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _a_pool_of_its_own():
    """Each test starts with a new pool, made by the backend as a server process's first request
    makes it (an earlier test's pool may hold idle connections, handed out first)."""
    connection.close()
    connection.close_pool()
    connection.pool.open(wait=True)
    yield
    connection.close()
    connection.close_pool()


def _admin() -> psycopg.Connection:
    return psycopg.connect(database_url(), autocommit=True)


def _gone(admin: psycopg.Connection, pids: list[int]) -> None:
    admin.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", [pids])
    deadline = time.monotonic() + 5
    while admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [pids]
    ).fetchone()[0]:
        assert time.monotonic() < deadline, "the backends did not end"
        time.sleep(0.01)


def test_connections_their_server_ended_are_replaced_before_they_are_handed_out():
    pool = connection.pool
    held = [pool.getconn() for _ in range(3)]
    ended = [conn.info.backend_pid for conn in held]
    for conn in held:
        pool.putconn(conn)
    pool.pop_stats()
    with _admin() as admin:
        _gone(admin, ended)
    handed = [pool.getconn() for _ in range(3)]
    try:
        for conn in handed:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            assert conn.info.backend_pid not in ended
        assert pool.get_stats().get("connections_lost") == 3
    finally:
        for conn in handed:
            pool.putconn(conn)


def test_the_pool_hands_out_a_quiet_connection_without_a_round_trip():
    pool = connection.pool
    marked = pool.getconn()
    marked.execute("SELECT 'the last statement'")
    pid = marked.info.backend_pid
    pool.putconn(marked)
    handed = []
    try:
        while not handed or handed[-1].info.backend_pid != pid:  # the pool hands out in turn
            handed.append(pool.getconn(timeout=5))
        with _admin() as admin:
            last = admin.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid])
            assert last.fetchone() == ("SELECT 'the last statement'",)  # a round trip sends ""
    finally:
        for conn in handed:
            pool.putconn(conn)


def test_a_quiet_connection_is_checked_without_a_round_trip():
    with _admin() as admin, _admin() as quiet:
        quiet.execute("SELECT 'the last statement'")
        check_when_told(quiet)
        last = admin.execute(
            "SELECT query FROM pg_stat_activity WHERE pid = %s", [quiet.info.backend_pid]
        ).fetchone()
        assert last == ("SELECT 'the last statement'",)  # Django's check would have sent ""


def test_an_ended_connection_fails_the_check():
    with _admin() as admin, _admin() as doomed:
        _gone(admin, [doomed.info.backend_pid])
        with pytest.raises(psycopg.OperationalError):
            check_when_told(doomed)


def test_connections_send_keepalives_after_half_a_minute_idle():
    """What lets a quiet socket speak for a peer that forgot it (a failover, a NAT's expiry):
    its reset to a keepalive, reported on the socket the check looks at."""
    conn = connection.pool.getconn()
    try:
        own = socket.socket(fileno=os.dup(conn.fileno()))
        with own:
            if own.family not in (socket.AF_INET, socket.AF_INET6):
                pytest.fail(f"the test database is reached over {own.family!r}, not TCP")
            assert own.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
            assert own.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 30
            assert own.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL) == 10
            assert own.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT) == 3
    finally:
        connection.pool.putconn(conn)
