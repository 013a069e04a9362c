"""The stored verification: carried on from a checkpoint, it proves what a fresh pass proves,
reads only the new events, and notices when the log changed under it."""

from __future__ import annotations

import json

import pytest
from django.db import DataError, ProgrammingError, connection, transaction

from eventlog import append_only
from eventlog.chain import canonical_json, document_hash
from eventlog.models import Event
from rolls.checks import followups
from rolls.models import VerificationCheckpoint
from rolls.trust.stored_log import (
    _fast_hash,
    _fields,
    chain_intact,
    event_rows,
    raw_chain_rows,
    verify_campaigns,
)
from tests.eventlog.forgery import payload_column
from tests.live.test_live_witness import _raw
from tests.rolls.trust.conftest import TRAITS, roll


def _summary(report):
    (campaign,) = report.campaigns
    return campaign.events, [str(p) for p in campaign.problems], campaign.detail_lines()


def test_carrying_on_proves_what_a_fresh_pass_proves(play, users, django_assert_max_num_queries):
    campaign = play("age", end=False)
    verify_campaigns()
    checkpoint = VerificationCheckpoint.objects.get(campaign=campaign)
    assert checkpoint.ok and checkpoint.seq == campaign.head_seq

    hero = campaign.characters.get(name="Hero")
    check = roll(campaign, users["alice"], character=str(hero.pk), **TRAITS["age"])
    with django_assert_max_num_queries(12):  # one new event: no pass over the whole log
        carried = verify_campaigns()
    assert VerificationCheckpoint.objects.get(campaign=campaign).seq == check.seq
    assert _summary(carried) == _summary(verify_campaigns(fresh=True))
    assert not carried.problems


def test_a_follow_up_of_a_roll_verified_before_the_checkpoint(play, users):
    campaign = play("age", end=False)
    early = Event.objects.get(campaign=campaign, payload__label="in the open")
    verify_campaigns()
    followups.spend_fortune(campaign=campaign, actor=users["alice"], seq=early.seq, die=1, value=6)
    assert not verify_campaigns().problems
    spent = Event.objects.filter(campaign=campaign, type="check.fortune_spent").last()
    payload = dict(spent.payload, result={**spent.payload["result"], "total": 99})
    _rewrite_in_place(spent, payload)
    problems = verify_campaigns(rehash=True).problems
    assert any(p.seq == spent.seq and "hash mismatch" in p.what for p in problems)


def _rewrite_in_place(event: Event, payload: dict) -> None:
    """The payload edited (on PostgreSQL its canonical text, and so the jsonb generated from it)."""
    statement = f"UPDATE campaign_event SET {payload_column()} = %s WHERE id = %s"
    _raw([(statement, [json.dumps(payload), event.pk])])


def test_a_rewrite_rehashed_under_the_checkpoint_is_reported(play):
    """The checkpoint is the server's own witness: a re-hashed history no longer has the hash it
    verified; only an explicit --fresh starts over (and then nothing inside the log shows it)."""
    campaign = play("cofd")
    verify_campaigns()
    rows = list(event_rows(campaign.pk))
    target = next(r for r in rows if r["type"] == "check.rolled")
    prev, statements = rows[target["seq"] - 2]["hash"], []
    for row in rows[target["seq"] - 1 :]:
        if row is target:
            row["payload"] = {**row["payload"], "label": "never happened"}
        row["prev_hash"] = prev
        if row["type"] == "session.ended":  # a careful forger fixes the receipt inside too
            row["payload"] = {**row["payload"], "final_hash": prev}
        row["hash"] = prev = document_hash(row)
        where = [campaign.pk, row["seq"]]
        statements.append(
            (
                f"UPDATE campaign_event SET {payload_column()} = %s, prev_hash = %s, "
                "hash = %s WHERE campaign_id = %s AND seq = %s",
                [
                    canonical_json(row["payload"]),
                    row["prev_hash"],
                    row["hash"],
                    *where,
                ],
            )
        )
    statements.append(
        ("UPDATE campaign_campaign SET head_hash = %s WHERE id = %s", [prev, campaign.pk])
    )
    _raw(statements)
    (problem,) = verify_campaigns().problems
    assert problem.seq is None and "no longer has the hash verified on" in problem.what
    assert verify_campaigns().problems, "it stays reported"
    assert not verify_campaigns(fresh=True).problems


def test_the_fast_chain_check_agrees_with_the_full_one(play, users):
    """Public events are hashed from the stored text, hidden ones re-encoded; an edit in place,
    a link or a head that does not match, and it says so."""
    campaign = play("storyteller")
    head = campaign.head_seq
    assert chain_intact(campaign.pk, until=head, head_hash=campaign.head_hash)
    assert not chain_intact(campaign.pk, until=head, head_hash="0" * 64)
    assert chain_intact(
        campaign.pk, until=head - 1, head_hash=campaign.events.get(seq=head - 1).hash
    )
    for label in ("in the open", "for my eyes"):  # a public event, then a sealed one
        event = Event.objects.get(campaign=campaign, payload__label=label)
        original = dict(event.payload)
        _rewrite_in_place(event, {**original, "label": "edited"})
        assert not chain_intact(campaign.pk, until=head, head_hash=campaign.head_hash), label
        _rewrite_in_place(event, original)
        assert chain_intact(campaign.pk, until=head, head_hash=campaign.head_hash), label


@pytest.mark.parametrize("system", ["d6pool", "storyteller", "cofd", "age", "nice_damnit"])
def test_every_stored_event_hashes_from_its_stored_text(play, system):
    """The fast path is taken, not merely fallen back from: every event's hash, public and sealed
    ones, is SHA-256 over its stored canonical text as is (payload_text on PostgreSQL)."""
    campaign = play(system)
    rows = [_fields(campaign.pk, row) for row in raw_chain_rows(campaign.pk, campaign.head_seq)]
    assert len(rows) == campaign.head_seq
    assert {fields["visibility"] for fields, _ in rows} >= {"public", "private", "blind"}
    assert [fields["seq"] for fields, hash_ in rows if _fast_hash(fields) != hash_] == []


@pytest.mark.postgres
def test_the_jsonb_payload_cannot_be_written_apart_from_its_hashed_text(play):
    """PostgreSQL keeps the payload twice: the canonical text the chain hashes and the jsonb the
    application reads, generated from it (eventlog.0007). Behind the triggers' back, a forger
    can rewrite the text (the hash then tells), but not the jsonb alone: not in place, not in a
    row of its own."""
    campaign = play("cofd")
    event = Event.objects.get(campaign=campaign, payload__label="in the open")
    forged = json.dumps({**event.payload, "label": "edited"})
    columns = "campaign_id, seq, type, payload, payload_text, created_at, visibility, prev_hash"
    attempts = [
        (
            "UPDATE campaign_event SET payload = %s WHERE id = %s",
            ProgrammingError,
            "can only be updated to DEFAULT",
        ),
        (
            f"INSERT INTO campaign_event ({columns}, hash) SELECT campaign_id, seq + 1000, type, "
            "%s::jsonb, payload_text, created_at, visibility, prev_hash, hash "
            "FROM campaign_event WHERE id = %s",
            ProgrammingError,
            "cannot insert a non-DEFAULT value",
        ),
        (  # the text must be JSON: it is parsed into the jsonb
            "UPDATE campaign_event SET payload_text = %s || 'not json' WHERE id = %s",
            DataError,
            "invalid input syntax for type json",
        ),
    ]
    append_only.drop(connection)  # the triggers are not what refuses these
    try:
        for statement, error, message in attempts:
            with pytest.raises(error, match=message), transaction.atomic():
                connection.cursor().execute(statement, [forged, event.pk])
    finally:
        append_only.install(connection)
    assert Event.objects.get(pk=event.pk).payload == event.payload
    assert not verify_campaigns(fresh=True).problems


@pytest.mark.postgres
def test_a_jsonb_payload_edited_apart_from_its_hashed_text_is_found(play):
    """The owner can take the jsonb's expression away (it stays a plain column) and edit it
    apart from the text the fast chain hashes: --rehash and a fresh proof find it."""
    campaign = play("cofd")
    verify_campaigns()
    event = Event.objects.get(campaign=campaign, payload__label="in the open")
    forged = json.dumps({**event.payload, "label": "edited"})
    _raw(
        [
            ("SET CONSTRAINTS ALL IMMEDIATE", []),  # no pending foreign-key checks before ALTER
            ("ALTER TABLE campaign_event ALTER COLUMN payload DROP EXPRESSION", []),
            ("UPDATE campaign_event SET payload = %s WHERE id = %s", [forged, event.pk]),
        ]
    )
    assert chain_intact(campaign.pk, until=campaign.head_seq, head_hash=campaign.head_hash)
    problems = verify_campaigns(rehash=True).problems
    assert any(p.seq == event.seq and "hash mismatch" in p.what for p in problems)
    problems = verify_campaigns(fresh=True).problems
    assert any(p.seq == event.seq and "hash mismatch" in p.what for p in problems)
