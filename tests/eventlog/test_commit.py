"""Writes that ride with the COMMIT (eventlog/commit.py) keep a transaction's meaning: they run
before anything after them, a failed one undoes the whole transaction, a rollback (to a
savepoint, or whole) takes them back, and whoever waits for their id gets it."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from campaign.models import IdempotentRequest
from eventlog import commit

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _answer(user, key: str, done=None) -> None:
    """Queue the INSERT of an idempotency answer (the same write `campaign.idempotency` makes)."""
    commit.write(
        connection,
        "INSERT INTO campaign_idempotentrequest "
        "(user_id, campaign_id, key, fingerprint, status, body, created_at) "
        "VALUES (%s, 0, %s, 'f', 201, '{}', %s) RETURNING id",
        (user.pk, key, timezone.now()),
        done,
    )


def _keys() -> list[str]:
    return sorted(IdempotentRequest.objects.values_list("key", flat=True))


def test_a_queued_write_waits_for_the_commit_and_hands_over_its_id(users):
    ids = []
    with transaction.atomic():
        _answer(users["alice"], "a", done=lambda row: ids.append(row[0]))
        assert connection.queued_writes and ids == []  # nothing sent yet
    assert ids == [IdempotentRequest.objects.get(key="a").pk]


def test_a_statement_after_a_queued_write_sees_it(users):
    with transaction.atomic():
        _answer(users["alice"], "b")
        assert _keys() == ["b"]  # sent before the SELECT
        assert not connection.queued_writes


def test_a_refused_queued_write_fails_the_commit_and_undoes_everything(users):
    _answer(users["alice"], "taken")
    with pytest.raises(IntegrityError), transaction.atomic():
        IdempotentRequest.objects.create(
            user=users["boris"],
            campaign_id=0,
            key="before",
            fingerprint="f",
            status=201,
            body={},
        )
        _answer(users["alice"], "taken")  # refused only at COMMIT
    assert _keys() == ["taken"]
    with transaction.atomic():  # the connection is usable, and the queue was not kept
        assert not connection.queued_writes
        _answer(users["alice"], "after")
    assert _keys() == ["after", "taken"]


def test_a_rollback_takes_queued_writes_back(users):
    with pytest.raises(RuntimeError), transaction.atomic():
        _answer(users["alice"], "lost")
        raise RuntimeError("refused")
    with transaction.atomic():
        _answer(users["alice"], "kept")
        try:
            with transaction.atomic():  # a savepoint
                _answer(users["alice"], "inner")
                raise RuntimeError("refused inside")
        except RuntimeError:
            pass
    assert _keys() == ["kept"]


def _campaign(users):
    from campaign import services

    return services.create_campaign(name="Queued", system="cofd", created_by=users["gm"])


def test_an_append_goes_with_the_commit_in_one_statement_with_the_rows_that_refer_to_it(users):
    """The event, the head, a row naming the event's id and a key's answer: one statement, sent
    with the COMMIT; the event's id reaches the event and the row once it has run."""
    from django.test.utils import CaptureQueriesContext

    from eventlog.models import Event
    from eventlog.projections import event_id
    from eventlog.stream import append_event, lock_stream

    campaign = _campaign(users)
    ids = []
    with CaptureQueriesContext(connection) as captured, transaction.atomic():
        locked = lock_stream(campaign.pk)
        event = append_event(campaign=locked, type="check.reset", payload={}, actor_id=None)
        reference = event_id(event)
        assert event.pk is None and isinstance(reference, commit.PendingEvent)  # not sent yet
        commit.write(
            connection,
            "INSERT INTO campaign_idempotentrequest "
            "(user_id, campaign_id, key, fingerprint, status, body, created_at) "
            "VALUES (%s, 0, %s, 'f', %s, '{}', %s) RETURNING id",
            (users["alice"].pk, "answer", 201, timezone.now()),
            lambda row: ids.append(row[0]),
        )
    sent = [q["sql"] for q in captured.captured_queries if q.get("with_commit")]
    assert len(sent) == 1 and sent[0].startswith("WITH e AS (INSERT INTO campaign_event")
    stored = Event.objects.get(campaign=campaign, seq=event.seq)
    assert event.pk == stored.pk and stored.hash == event.hash
    assert ids == [IdempotentRequest.objects.get(key="answer").pk]
    campaign.refresh_from_db()
    assert (campaign.head_seq, campaign.head_hash) == (event.seq, event.hash)


def test_a_queued_append_whose_head_moved_fails_the_commit_and_writes_nothing(users):
    """The head's guard is inside the statement: the COMMIT it rides with is refused, not
    answered after the event went in."""
    from django.db import DataError

    from eventlog.models import Event
    from eventlog.recorders import recorder
    from eventlog.stream import lock_stream

    campaign = _campaign(users)
    before = list(Event.objects.filter(campaign=campaign).values_list("seq", flat=True))
    with pytest.raises(DataError, match="stream head moved"), transaction.atomic():
        locked = lock_stream(campaign.pk)
        forged = Event.objects.filter(campaign=campaign).order_by("-seq").first()
        forged.pk, forged.seq = None, locked.head_seq + 1
        forged.hash, forged.payload_text = "f" * 64, None
        recorder().append_later([forged], expected_seq=locked.head_seq - 1)  # not the head
        _answer(users["alice"], "lost")
    assert list(Event.objects.filter(campaign=campaign).values_list("seq", flat=True)) == before
    assert _keys() == []
    campaign.refresh_from_db()
    assert campaign.head_seq == before[-1]


def test_only_inserts_join_the_appends_statement(users):
    """CTEs of one statement share a snapshot and run in no set order: a queued UPDATE after an
    append goes as a statement of its own (in the same pipeline), and sees the append's rows."""
    from django.test.utils import CaptureQueriesContext

    from eventlog.stream import append_event, lock_stream

    campaign = _campaign(users)
    with CaptureQueriesContext(connection) as captured, transaction.atomic():
        locked = lock_stream(campaign.pk)
        event = append_event(campaign=locked, type="check.reset", payload={}, actor_id=None)
        commit.write(
            connection,
            "UPDATE campaign_campaign SET name = 'Renamed' WHERE id = %s AND head_seq = %s",
            (campaign.pk, event.seq),
            None,
        )
    sent = [q["sql"] for q in captured.captured_queries if q.get("with_commit")]
    assert len(sent) == 2 and sent[1].startswith("UPDATE campaign_campaign"), sent
    campaign.refresh_from_db()
    assert campaign.name == "Renamed"  # the UPDATE saw the head the append moved


def test_a_row_cannot_name_an_event_of_an_earlier_append_in_a_later_statement(users):
    """Two appends with nothing read between them are two folded statements; a row queued after
    the second that names the first's event is refused, not given a NULL id."""
    from eventlog.stream import append_event, lock_stream

    campaign = _campaign(users)
    with pytest.raises(RuntimeError, match="another append"), transaction.atomic():
        locked = lock_stream(campaign.pk)
        first = append_event(campaign=locked, type="check.reset", payload={}, actor_id=None)
        append_event(campaign=locked, type="check.reset", payload={}, actor_id=None)
        commit.write(
            connection,
            "INSERT INTO campaign_idempotentrequest "
            "(user_id, campaign_id, key, fingerprint, status, body, created_at) "
            "VALUES (%s, %s, 'k', 'f', 201, '{}', %s) RETURNING id",
            (users["alice"].pk, commit.PendingEvent(first), timezone.now()),
            None,
        )
    assert _keys() == []
