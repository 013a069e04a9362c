"""What a check appends is compressed with lz4 on PostgreSQL (eventlog/migrations/_compression):
pglz, the server's default, was a fifth of the server's work for a check, inside the campaign's
lock (#17)."""

from __future__ import annotations

import pytest
from django.db import connection

from eventlog.migrations._compression import APPENDED
from tests.rolls.checks.test_statements import _roll

pytestmark = pytest.mark.postgres


def _compression(table: str, column: str) -> str | None:
    """How the newest row's value is stored: 'lz4', 'pglz', or None for one left uncompressed
    (under the 2 kB at which PostgreSQL compresses)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT pg_column_compression({column}) FROM {table} ORDER BY id DESC LIMIT 1"
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_a_check_s_rows_are_compressed_with_lz4(table, users):
    _roll(table("cofd", manual=True), users, "compression-key")
    stored = {
        (name, column): _compression(name, column)
        for name, columns in APPENDED.items()
        for column in columns
    }
    # The event's two copies of its payload and the answer kept for the key pass 2 kB: they
    # are compressed, and with lz4; nothing the check wrote is compressed otherwise.
    assert stored[("campaign_event", "payload_text")] == "lz4", stored
    assert stored[("campaign_event", "payload")] == "lz4", stored
    assert stored[("campaign_idempotentrequest", "body")] == "lz4", stored
    assert {method for method in stored.values() if method} == {"lz4"}, stored
