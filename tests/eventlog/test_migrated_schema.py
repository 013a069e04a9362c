"""The schema `migrate` leaves behind, on a database of its own: the suite's fixture installs the
append-only triggers around every test (tests/conftest.py), so only a fresh migration shows
whether the migrations themselves keep them."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from tests.fresh_process import python_output

# Migrates, writes a campaign's first events, then tries to change them on the raw connection.
PROBE = """
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from campaign import services

call_command("migrate", verbosity=0)
gm = get_user_model().objects.create_user("gm", password="gm-password")
services.create_campaign(name="Table", system="cofd", created_by=gm)
for statement in ("UPDATE campaign_event SET type = 'forged'", "DELETE FROM campaign_event"):
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement)
        print("allowed")
    except DatabaseError:
        print("refused")
with connection.cursor() as cursor:
    for table in ("campaign_event", "campaign_idempotentrequest"):
        indexes = connection.introspection.get_constraints(cursor, table).values()
        print(sorted(",".join(i["columns"]) for i in indexes if i["index"] and not i["unique"]))
"""


def _migrate_and_probe(database_url: str, tmp_path: Path) -> list[str]:
    return python_output(PROBE, tmp_path, database_url, timeout=300).splitlines()


def _fresh_postgres(tmp_path: Path):
    """A database of this test's own on the suite's PostgreSQL server, dropped afterwards."""
    url = os.environ["DATABASE_URL"]  # the marker made sure it is PostgreSQL's
    name = f"migrated_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        connection.execute(f"CREATE DATABASE {name}")
    return admin, name, urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


EVENT_INDEXES = str(
    sorted(
        f"campaign_id,{column},seq"
        for column in ("type", "session_id", "chapter_id", "character_id")
    )
)


def _check(update: str, delete: str, event_indexes: str, key_indexes: str) -> None:
    assert (update, delete) == ("refused", "refused")
    assert event_indexes == EVENT_INDEXES
    assert key_indexes == "['created_at']"


def test_a_freshly_migrated_sqlite_log_refuses_changes_and_keeps_only_the_indexes_it_reads(
    tmp_path,
):
    """An AlterField of the event's payload (campaign 0005) had rebuilt SQLite's table and
    dropped its triggers: a database migrated from scratch, the embedded default `make run`
    makes, let events be edited and deleted. Indexes: the single-column ones on the campaign and
    the actor were written by every append and served nothing the unique (campaign, seq) does
    not; the idempotency key's user index, nothing its unique (user, campaign, key) does not."""
    _check(*_migrate_and_probe(f"sqlite:///{tmp_path / 'fresh.sqlite3'}", tmp_path))


@pytest.mark.postgres
def test_a_freshly_migrated_postgres_log_refuses_changes_and_keeps_only_the_indexes_it_reads(
    tmp_path,
):
    admin, name, url = _fresh_postgres(tmp_path)
    try:
        _check(*_migrate_and_probe(url, tmp_path))
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


# Plays a session, migrates the log back before eventlog.0007 (the jsonb a copy of its own,
# bound by a CHECK), empties one row's text as rows appended before eventlog.0002 had it, and
# migrates forward again.
PAYLOAD_PROBE = """
import django
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from campaign import services
from eventlog import append_only
from eventlog.models import Event
from rolls.trust.stored_log import _one_payload_copy, verify_campaigns

call_command("migrate", verbosity=0)
gm = get_user_model().objects.create_user("gm", password="gm-password")
campaign = services.create_campaign(name="Table", system="cofd", created_by=gm)
services.start_session(campaign=campaign, actor=gm)
before = list(Event.objects.order_by("seq").values_list("seq", "payload", "payload_text"))
def schema():
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attname, attgenerated, attnotnull, attcompression FROM pg_attribute "
            "WHERE attrelid = 'campaign_event'::regclass AND attname IN ('payload', 'payload_text')"
            " ORDER BY attname"
        )
        columns = cursor.fetchall()
        cursor.execute(
            "SELECT convalidated FROM pg_constraint "
            "WHERE conname = 'campaign_event_payload_text_agrees'"
        )
        return columns, cursor.fetchall()

print(schema())
call_command("migrate", "eventlog", "0006", verbosity=0)
print(_one_payload_copy(), schema())
append_only.drop(connection)
with connection.cursor() as cursor:
    cursor.execute("UPDATE campaign_event SET payload_text = NULL WHERE seq = 2")
append_only.install(connection)
call_command("migrate", verbosity=0)
print(_one_payload_copy(), schema())
after = list(Event.objects.order_by("seq").values_list("seq", "payload", "payload_text"))
print(after == before, len(after))
print(verify_campaigns(fresh=True).problems)
try:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE campaign_event SET type = 'forged'")
    print("allowed")
except DatabaseError:
    print("refused")
"""


@pytest.mark.postgres
def test_postgres_s_jsonb_payload_becomes_a_column_generated_from_its_text(tmp_path):
    """eventlog.0007 on a log with events, one of them stored without its canonical text: the
    text is made for it, the jsonb is then generated from the text (the catalog says so, and
    the proof reads one copy), every payload reads back as before, the log verifies and the
    triggers still refuse changes; the jsonb keeps lz4 (the rewrite compresses every row).
    Migrated back, the jsonb is a copy of its own again, bound by the validated constraint."""
    admin, name, url = _fresh_postgres(tmp_path)
    try:
        lines = python_output(PAYLOAD_PROBE, tmp_path, url, timeout=300).splitlines()
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    generated = "([('payload', 's', True, 'l'), ('payload_text', '', True, 'l')], [])"
    copy = "([('payload', '', True, 'l'), ('payload_text', '', False, 'l')], [(True,)])"
    assert lines == [generated, f"False {copy}", f"True {generated}", "True 3", "[]", "refused"]
