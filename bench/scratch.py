"""A benchmark's own PostgreSQL database: created empty beside the one it was given, dropped after.

A benchmark never writes to the database it is pointed at, and never to one on another machine:
it measures this machine, and dropping a database is not something to do to someone else's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def fresh_database(url: str, name: str) -> tuple[str, Callable[[], None]]:
    """Database ``name`` on the server of ``url`` (a loopback address), created empty (dropped
    first if a run left it): its URL, and the call that drops it."""
    import psycopg

    parts = urlsplit(url)
    if parts.hostname not in LOOPBACK:
        raise SystemExit(f"refusing to benchmark a database not on this machine: {parts.hostname}")
    admin = urlunsplit(parts._replace(path="/postgres"))

    def admin_sql(sql: str) -> None:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(sql)

    def drop() -> None:
        admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    drop()
    admin_sql(f'CREATE DATABASE "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}")), drop


@contextmanager
def scratch_database(url: str, name: str) -> Iterator[str]:
    """`fresh_database` for a block: its URL, the database dropped when the block ends."""
    own, drop = fresh_database(url, name)
    try:
        yield own
    finally:
        drop()
