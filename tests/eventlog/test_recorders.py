"""The event recorders' contract (eventlog/recorders): one suite, run against the backend the
suite runs on (SQLite by default, PostgreSQL with DATABASE_URL; `make test` and
`make test-services` between them run it on both).

A recorder appends events a caller chained under the stream lock and moves the head in the same
step, refuses an append whose head moved, and reads back exactly what the ORM reads (values and
Python types), so that a stored event hashes to its hash."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from uuid import uuid4

import psycopg
import pytest
from django.db import DataError, connection, transaction

from campaign.models import Campaign
from eventlog.chain import timestamp
from eventlog.models import Event, payload_text_for
from eventlog.recorders import HeadMoved, Recorded, recorder
from eventlog.stream import hash_of, lock_stream
from tests.live.conftest import database_url


def _chained(campaign: Campaign, count: int, **values) -> list[Event]:
    """``count`` new events after the campaign's head, chained as append_event chains them."""
    events, seq, previous = [], campaign.head_seq, campaign.head_hash
    for index in range(count):
        seq += 1
        event = Event(
            campaign_id=campaign.pk,
            seq=seq,
            type="check.revealed",
            payload={"check_seq": index, "ünïcode": "бросок", "nested": {"b": 1, "a": [1, 2]}},
            actor_id=None,
            created_at=datetime(2026, 11, 30, 19, 0, index, 123456, tzinfo=UTC),
            visibility="public",
            prev_hash=previous,
            **values,
        )
        event.payload_text = payload_text_for(event.payload)
        event.hash = previous = hash_of(event)
        events.append(event)
    return events


def _stored(event: Event) -> dict:
    return {field.attname: getattr(event, field.attname) for field in Event._meta.concrete_fields}


def test_an_append_stores_the_events_and_moves_the_head(make_campaign):
    campaign = make_campaign("cofd")
    with transaction.atomic():
        locked = lock_stream(campaign.pk)
        events = _chained(locked, 3, session_id=uuid4(), character_id=uuid4())
        ids = recorder().append(events, expected_seq=locked.head_seq)
    assert len(ids) == 3 and ids == sorted(ids)
    stored = list(Event.objects.filter(pk__in=ids).order_by("seq"))
    assert [e.seq for e in stored] == [e.seq for e in events]
    for event, row in zip(events, stored, strict=True):
        event.pk = row.pk
        assert _stored(row) == _stored(event)
        assert hash_of(row) == row.hash
    campaign.refresh_from_db()
    assert (campaign.head_seq, campaign.head_hash) == (events[-1].seq, events[-1].hash)


def test_an_append_whose_head_moved_is_refused_and_leaves_nothing(make_campaign):
    campaign = make_campaign("cofd")
    before = Event.objects.filter(campaign=campaign).count()
    with pytest.raises(HeadMoved), transaction.atomic():
        locked = lock_stream(campaign.pk)
        # The caller believes the head is one event back: another writer appended since.
        recorder().append(_chained(locked, 1), expected_seq=locked.head_seq - 1)
    assert Event.objects.filter(campaign=campaign).count() == before
    campaign.refresh_from_db()
    assert campaign.head_seq == before


def test_reading_gives_what_the_orm_reads(make_campaign):
    campaign = make_campaign("storyteller")
    with transaction.atomic():
        locked = lock_stream(campaign.pk)
        recorder().append(
            _chained(locked, 4, scene_id=uuid4(), chapter_id=uuid4()),
            expected_seq=locked.head_seq,
        )
    orm = list(Event.objects.filter(campaign=campaign).order_by("seq"))
    read = [Recorded(row) for row in recorder().rows(campaign.pk)]
    assert [_stored(e) for e in read] == [_stored(e) for e in orm]
    for mine, theirs in zip(read, orm, strict=True):
        for name, value in _stored(theirs).items():
            assert type(getattr(mine, name)) is type(value), name
        assert hash_of(mine) == mine.hash
    assert [e.seq for e in recorder().page(campaign.pk, after=2, limit=3)] == [3, 4, 5]


def test_a_page_has_each_time_as_the_event_document_writes_it(make_campaign):
    """A page's events carry their time as the text the feed shows and the chain hashes,
    selected so (`created_text`): a whole second, a fraction with trailing zeros, six digits."""
    campaign = make_campaign("cofd")
    with transaction.atomic():
        locked = lock_stream(campaign.pk)
        events = _chained(locked, 3)
        previous = locked.head_hash
        for event, micro in zip(events, (0, 500_000, 123_456), strict=True):
            event.created_at = event.created_at.replace(microsecond=micro)
            event.prev_hash = previous
            event.hash = previous = hash_of(event)
        recorder().append(events, expected_seq=locked.head_seq)
    paged = recorder().page(campaign.pk, after=locked.head_seq, limit=10)
    stored = Event.objects.filter(campaign=campaign, seq__gt=locked.head_seq).order_by("seq")
    assert (
        [e.created_text for e in paged]
        == [timestamp(e.created_at) for e in stored]
        == [
            "2026-11-30T19:00:00.000000+00:00",
            "2026-11-30T19:00:01.500000+00:00",
            "2026-11-30T19:00:02.123456+00:00",
        ]
    )
    assert [e.created_at for e in paged] == [e.created_at for e in stored]


def test_rows_stream_in_batches(make_campaign):
    campaign = make_campaign("cofd")
    with transaction.atomic():
        locked = lock_stream(campaign.pk)
        recorder().append(_chained(locked, 7), expected_seq=locked.head_seq)
    total = Event.objects.filter(campaign=campaign).count()
    seqs = [row[2] for row in recorder().rows(campaign.pk, batch=3)]
    assert seqs == list(range(1, total + 1))
    replayed = [Recorded(row) for row in recorder().rows(campaign.pk, after=1, batch=4)]
    assert [_stored(e) for e in replayed] == [
        _stored(e) for e in Event.objects.filter(campaign=campaign, seq__gt=1).order_by("seq")
    ]


def test_statements_on_the_driver_connection_are_counted(make_campaign):
    from django.test.utils import CaptureQueriesContext

    campaign = make_campaign("cofd")
    with CaptureQueriesContext(connection) as captured, transaction.atomic():
        locked = lock_stream(campaign.pk)
        recorder().append(_chained(locked, 1), expected_seq=locked.head_seq)
    appended = [q["sql"] for q in captured.captured_queries if "INSERT" in q["sql"]]
    assert len(appended) == 1


def _locked_elsewhere(campaign_id: int) -> bool:
    """Whether another connection finds the campaign's stream lock taken (PostgreSQL)."""
    with psycopg.connect(database_url(), autocommit=True) as other:
        try:
            other.execute(
                "SELECT 1 FROM campaign_campaign WHERE id = %s FOR UPDATE NOWAIT", [campaign_id]
            )
        except psycopg.errors.LockNotAvailable:
            return True
    return False


@pytest.mark.django_db(transaction=True)
def test_a_locked_read_reads_as_fetch_and_holds_the_stream_to_the_end(make_campaign):
    """`fetch_locked` gives the rows `fetch` gives for the same read (one that joins the head's
    row as `cc`), and on PostgreSQL the stream stays locked until the transaction ends (on
    SQLite the write transaction is the lock)."""
    campaign = make_campaign("cofd")
    sql = "SELECT cc.id, cc.head_seq, cc.name FROM campaign_campaign cc WHERE cc.id = %s"
    expected = [(campaign.pk, campaign.head_seq, campaign.name)]
    postgresql = connection.vendor == "postgresql"
    with transaction.atomic():
        assert recorder().fetch_locked(sql, [campaign.pk]) == expected
        assert recorder().fetch(sql, [campaign.pk]) == expected
        assert not postgresql or _locked_elsewhere(campaign.pk)
    assert not postgresql or not _locked_elsewhere(campaign.pk)
    with transaction.atomic():
        assert recorder().fetch_locked(sql, [campaign.pk + 1000]) == []


def _prepared_appends() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["WITH e AS (INSERT INTO campaign_event%"],
        )
        return cursor.fetchone()[0]


@pytest.mark.postgres
def test_postgresql_appends_in_one_prepared_statement(make_campaign):
    """Prepared once per connection and shape (psycopg keys a statement by its parameters'
    types too, so a NULL column makes another variant), then only executed."""
    campaign = make_campaign("cofd")
    counts = []
    for _ in range(3):
        with transaction.atomic():
            locked = lock_stream(campaign.pk)
            recorder().append(_chained(locked, 1), expected_seq=locked.head_seq)
        counts.append(_prepared_appends())
    assert counts[0] >= 1
    assert counts[0] == counts[1] == counts[2]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("in_transaction", [True, False])
def test_replay_rows_stream_the_log_in_or_out_of_a_transaction(make_campaign, in_transaction):
    from eventlog.replay import stored_hash

    campaign = make_campaign("cofd")
    with transaction.atomic():
        locked = lock_stream(campaign.pk)
        recorder().append(
            _chained(locked, 7, session_id=uuid4(), character_id=uuid4()),
            expected_seq=locked.head_seq,
        )
    block = transaction.atomic() if in_transaction else contextlib.nullcontext()
    with block:
        rows = list(recorder().replay_rows(campaign.pk, after=1, batch=3))
    stored = list(Event.objects.filter(campaign=campaign, seq__gt=1).order_by("seq"))
    assert [row[1] for row in rows] == [event.seq for event in stored]
    for row, event in zip(rows, stored, strict=True):
        _, seq, type_, text, actor, _, created_text, visibility = row[:8]
        ids, prev_hash, hash_ = row[12:]
        assert ids == tuple(
            None if value is None else str(value)
            for value in (event.session_id, event.scene_id, event.chapter_id, event.character_id)
        )
        stored_values = (campaign.pk, seq, type_, text, actor, created_text, visibility, ids)
        # The stored canonical text hashes as it is, as the replay's fast path takes it.
        assert hash_ == event.hash == stored_hash(*stored_values, prev_hash)


@pytest.mark.parametrize(
    ("stored", "document"),
    [
        ("2026-12-01 01:11:44.092925+00", "2026-12-01T01:11:44.092925+00:00"),
        ("2026-12-01 01:11:44.0929+00", "2026-12-01T01:11:44.092900+00:00"),
        ("2026-12-01 01:11:44+00", "2026-12-01T01:11:44.000000+00:00"),
        ("2026-12-01 04:11:44.5+03", "2026-12-01T01:11:44.500000+00:00"),  # not a UTC session
    ],
)
def test_a_replayed_time_is_the_documents_whatever_postgresql_left_out(stored, document):
    """PostgreSQL's text of a timestamptz drops a fraction's trailing zeros (and the fraction
    when it is zero); the event document, which the chain hashes, has six digits."""
    from eventlog.recorders.postgres import document_time

    assert document_time(stored) == document


@pytest.mark.django_db(transaction=True)
def test_replay_rows_closed_early_leave_the_connection_usable(make_campaign):
    """A replay refused half-way closes its rows (PostgreSQL: the cursor and the thread that
    fetches ahead); the transaction goes on."""
    campaign = make_campaign("cofd")
    with transaction.atomic():
        locked = lock_stream(campaign.pk)
        recorder().append(_chained(locked, 9), expected_seq=locked.head_seq)
    with transaction.atomic():
        rows = recorder().replay_rows(campaign.pk, batch=2)
        assert [next(rows)[1], next(rows)[1]] == [1, 2]
        rows.close()
        assert Event.objects.filter(campaign=campaign).count() >= 9
        again = [row[1] for row in recorder().replay_rows(campaign.pk, after=5, batch=2)]
    total = Event.objects.filter(campaign=campaign).count()
    assert again == list(range(6, total + 1))


@pytest.mark.postgres
def test_a_read_of_many_takes_every_parameter_as_fetch_does(make_campaign):
    """`fetch_many` (a page's check rows; SQLite's is its `fetch`) gives what `fetch` gives. On
    PostgreSQL it runs in one libpq call with its parameters as PostgreSQL's text input (the
    statement's types decide): quotes, backslashes, commas, NULL-looking text and non-ASCII in
    arrays arrive as sent."""
    tricky = ['a"b', "c\\d", "", "NULL", "e,f", "{g}", " h ", "бросок", None]
    sql = "SELECT %s::int, %s::text, %s::bool, %s::bool, %s::text[], %s::int[], %s::text"
    params = [7, 'a"b\\c', True, False, tricky, [1, -2], None]
    assert recorder().fetch_many(sql, params) == [tuple(params)]
    character = uuid4()
    assert recorder().fetch_many("SELECT %s::uuid, %s::bigint", [character, 2**62]) == [
        (character, 2**62)
    ]
    with pytest.raises(TypeError, match="parameter of type float"):
        recorder().fetch_many("SELECT %s::float", [1.5])
    with pytest.raises(DataError, match="NUL"):  # not a query cut at the NUL
        recorder().fetch_many("SELECT %s::text", ["before\x00after"])
    campaign = make_campaign("cofd")
    sql = "SELECT id, name, head_seq FROM campaign_campaign WHERE id = %s"
    assert recorder().fetch_many(sql, [campaign.pk]) == recorder().fetch(sql, [campaign.pk])


@pytest.mark.postgres
def test_a_read_of_many_s_error_is_django_s_with_its_state(make_campaign):
    """A failed read raises what the cursor raised: Django's error, with psycopg's (and its
    SQLSTATE: config/outage.py reads it) as its cause."""
    from django.db import ProgrammingError

    with pytest.raises(ProgrammingError) as raised, transaction.atomic():
        recorder().fetch_many("SELECT no_such_column FROM campaign_campaign WHERE id = %s", [1])
    assert raised.value.__cause__.sqlstate == "42703"
    assert recorder().fetch_many("SELECT %s::int + 1", [1]) == [(2,)]


@pytest.mark.postgres
def test_a_read_of_many_works_after_a_rollback_in_a_transaction(make_campaign):
    """psycopg deallocates every prepared statement of its connection after a rollback: a read
    of many is not prepared, and works in the transaction after one."""
    campaign = make_campaign("cofd")
    sql = "SELECT count(*) FROM campaign_event WHERE campaign_id = %s"
    for _ in range(2):
        with contextlib.suppress(RuntimeError), transaction.atomic():
            assert recorder().fetch_many(sql, [campaign.pk]) == [(campaign.head_seq,)]
            assert recorder().fetch(sql, [campaign.pk]) == [(campaign.head_seq,)]
            raise RuntimeError("rolled back")
        with transaction.atomic():
            assert recorder().fetch_many(sql, [campaign.pk]) == [(campaign.head_seq,)]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_read_of_many_outside_a_transaction_is_prepared_once_and_again_when_gone(make_campaign):
    """Outside a transaction (a socket's catch-up) a read of many is prepared once per
    connection; after psycopg's `DEALLOCATE ALL` (it sends one after a rollback) it is
    prepared again rather than failing."""
    campaign = make_campaign("cofd")
    sql = "SELECT count(*) FROM campaign_event WHERE campaign_id = %s"

    def prepared() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'tc_%%'")
            return cursor.fetchone()[0]

    with connection.cursor() as cursor:  # a pooled connection may hold other tests' reads
        cursor.execute("DEALLOCATE ALL")
    for _ in range(2):
        assert recorder().fetch_many(sql, [campaign.pk]) == [(campaign.head_seq,)]
    assert prepared() == 1
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    assert prepared() == 0
    assert recorder().fetch_many(sql, [campaign.pk]) == [(campaign.head_seq,)]
    assert prepared() == 1
    with contextlib.suppress(RuntimeError), transaction.atomic():  # psycopg's own reset
        recorder().fetch(sql, [campaign.pk])
        raise RuntimeError("rolled back")
    assert recorder().fetch(sql, [campaign.pk]) == [(campaign.head_seq,)]
    assert recorder().fetch_many(sql, [campaign.pk]) == [(campaign.head_seq,)]
    # One prepared before a DEALLOCATE ALL, another after: each is found gone or there alone.
    other = "SELECT count(*) FROM campaign_event WHERE campaign_id = %s AND seq > 0"
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    for read in (other, sql, other, sql):
        assert recorder().fetch_many(read, [campaign.pk]) == [(campaign.head_seq,)]
    assert prepared() == 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_read_of_many_first_in_a_transaction_is_the_transaction_s(make_campaign):
    """psycopg begins a transaction with its first statement: a read of many that comes first
    begins it too, and reads as of the transaction (not before it)."""
    from psycopg.pq import TransactionStatus

    campaign = make_campaign("cofd")
    sql = "SELECT count(*) FROM campaign_event WHERE campaign_id = %s"
    with transaction.atomic():
        assert recorder().fetch_many(sql, [campaign.pk]) == [(campaign.head_seq,)]
        assert connection.connection.pgconn.transaction_status == TransactionStatus.INTRANS
    with transaction.atomic():
        ((began,),) = recorder().fetch_many("SELECT transaction_timestamp()", [])
        recorder().fetch("SELECT pg_sleep(0.01)", [])
        assert recorder().fetch("SELECT transaction_timestamp()", []) == [(began,)]
