"""The backend's timestamptz loader (eventlog/backends/postgresql: psycopg's C loader under
Django's time zone) loads every time as Django's own loader does: the same instant, the same
`tzinfo` object, whatever the offset the server writes it with."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.db.backends.postgresql.psycopg_any import BaseTzLoader
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg.pq import Format

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

ZONES = st.sampled_from(
    ["UTC", "Europe/Moscow", "Asia/Kolkata", "America/St_Johns", "Pacific/Kiritimati"]
)
TIMES = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
)


def _django_loader():
    class DjangosLoader(BaseTzLoader):
        timezone = connection.timezone

    return DjangosLoader(
        connection.connection.adapters.types["timestamptz"].oid, connection.connection
    )


def test_the_connection_loads_times_with_the_c_based_loader():
    connection.ensure_connection()
    oid = connection.connection.adapters.types["timestamptz"].oid
    loader = connection.connection.adapters.get_loader(oid, Format.TEXT)
    assert loader.__name__ == "SpecificTzLoader" and not issubclass(loader, BaseTzLoader)
    assert loader.timezone == connection.timezone  # so create_cursor keeps it


@settings(max_examples=300, deadline=None)
@given(moment=TIMES, zone=ZONES)
def test_a_time_loads_as_djangos_loader_loads_it(moment, zone):
    """The server writes a time in the session's zone (its text has that zone's offset); both
    loaders read it so, and put Django's zone in place of the one found (Django keeps the
    session in its own zone, where that is the same instant)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('TimeZone', %s, true)", [zone])
        cursor.execute("SELECT %s::timestamptz, %s::timestamptz::text", [moment, moment])
        loaded, text = cursor.fetchone()
        expected = _django_loader().load(text.encode())  # made in the session's zone too
    assert loaded == expected and loaded.tzinfo is expected.tzinfo
    assert type(loaded) is datetime
    if zone == "UTC":
        assert loaded == moment


def test_a_time_written_with_another_offset_is_the_same_instant():
    """A time given with another offset comes back as the same instant, in Django's zone."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT '2026-12-06 21:00:00.123456+05:30'::timestamptz")
        (loaded,) = cursor.fetchone()
    assert loaded == datetime(2026, 12, 6, 15, 30, 0, 123456, tzinfo=UTC)
    assert loaded.tzinfo is connection.timezone
