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
