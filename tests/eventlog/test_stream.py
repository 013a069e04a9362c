"""The event log: gapless per-campaign seq, hash chain, append-only at the database level."""

from __future__ import annotations

import itertools
import threading

import pytest
from django.core.management import call_command
from django.db import DatabaseError, close_old_connections, connection, transaction

from campaign import services
from campaign.models import Character
from eventlog import append_only
from eventlog.models import AppendOnlyError, Event
from eventlog.stream import append_event, lock_stream
from rolls.trust.stored_log import verify_campaigns
from tests.eventlog.forgery import payload_column


def seqs(campaign) -> list[int]:
    return list(Event.objects.filter(campaign=campaign).values_list("seq", flat=True))


def test_every_event_gets_the_next_seq_and_chains_to_the_previous(make_campaign):
    campaign = make_campaign("storyteller")
    other = make_campaign("cofd", name="Another table")
    events = list(Event.objects.filter(campaign=campaign))
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert seqs(other) == list(range(1, len(seqs(other)) + 1)), "each campaign counts from 1"
    assert events[0].prev_hash == "0" * 64
    for previous, event in itertools.pairwise(events):
        assert event.prev_hash == previous.hash
    campaign.refresh_from_db()
    assert (campaign.head_seq, campaign.head_hash) == (events[-1].seq, events[-1].hash)
    assert [e.type for e in events[:2]] == ["campaign.created", "member.joined"]


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE campaign_event SET type = 'forged' WHERE seq = 1",
        "DELETE FROM campaign_event WHERE seq = 1",
        "DELETE FROM campaign_event",
    ],
)
def test_the_database_refuses_update_and_delete(make_campaign, statement):
    campaign = make_campaign()
    before = list(Event.objects.filter(campaign=campaign).values_list("seq", "type", "hash"))
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement)
    after = list(Event.objects.filter(campaign=campaign).values_list("seq", "type", "hash"))
    assert after == before


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)  # committed rows, as in production
def test_postgres_also_refuses_truncate(make_campaign):
    make_campaign()
    with (
        pytest.raises(DatabaseError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("TRUNCATE campaign_event CASCADE")


def test_the_orm_refuses_too_with_a_clear_error(make_campaign):
    campaign = make_campaign()
    event = Event.objects.filter(campaign=campaign).first()
    event.type = "forged"
    with pytest.raises(AppendOnlyError, match="append-only"):
        event.save()
    with pytest.raises(AppendOnlyError, match="append-only"):
        event.delete()
    with pytest.raises(AppendOnlyError):
        Event.objects.filter(campaign=campaign).update(type="forged")
    with pytest.raises(AppendOnlyError):
        Event.objects.filter(campaign=campaign).delete()
    stored = Event.objects.filter(campaign=campaign).count()
    event.pk, event.seq = None, stored + 1  # a new event, not chained by the stream
    with pytest.raises(AppendOnlyError, match="append_event"):
        Event.objects.create(**{f.attname: getattr(event, f.attname) for f in Event._meta.fields})
    assert Event.objects.filter(campaign=campaign).count() == stored


def _tamper(statement: str, params: list) -> None:
    """Change a row behind the triggers' back, as someone with raw database access could."""
    append_only.drop(connection)
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
    append_only.install(connection)


def test_verify_log_names_a_row_altered_behind_the_triggers_back(make_campaign, users, capsys):
    campaign = make_campaign("cofd")
    services.start_session(campaign=campaign, actor=users["gm"])
    assert not verify_campaigns().problems
    _tamper(
        f"UPDATE campaign_event SET {payload_column()} = %s WHERE campaign_id = %s AND seq = %s",
        ['{"user_id": 1, "role": "gm", "username": "mallory"}', campaign.pk, 2],
    )
    # Below the stored checkpoint, an edit in place (not re-hashed) is what --rehash is for.
    assert not verify_campaigns().problems
    report = verify_campaigns(rehash=True)
    assert len(report.problems) == 1
    problem = report.problems[0]
    assert (problem.campaign, problem.seq, problem.event_type) == (campaign.pk, 2, "member.joined")
    assert "hash mismatch" in str(problem)
    with pytest.raises(Exception, match="failed verification"):
        call_command("verify_log", "--rehash")
    assert f"campaign {campaign.pk}, event #2 (member.joined)" in capsys.readouterr().out


def test_verify_log_names_a_deleted_event_and_a_truncated_tail(make_campaign):
    campaign = make_campaign("d6pool")
    last = campaign.head_seq
    _tamper("DELETE FROM campaign_event WHERE campaign_id = %s AND seq = %s", [campaign.pk, 3])
    problem = verify_campaigns().problems[0]
    assert problem.seq == 4 and "3..3 are missing" in problem.what
    _tamper("DELETE FROM campaign_event WHERE campaign_id = %s AND seq >= %s", [campaign.pk, 3])
    problems = verify_campaigns().problems  # and the stored checkpoint notices the cut
    assert any(p.seq is None and f"head says {last} events" in p.what for p in problems)
    assert any("is gone: the log was cut back" in p.what for p in problems)


def test_verify_log_succeeds_on_an_intact_log(make_campaign, capsys):
    make_campaign("age")
    call_command("verify_log")
    assert "OK:" in capsys.readouterr().out


@pytest.mark.django_db(transaction=True)
def test_twenty_threads_appending_to_one_campaign_never_collide_or_leave_a_gap(users):
    campaign = services.create_campaign(name="Busy table", system="cofd", created_by=users["gm"])
    start = campaign.head_seq
    barrier = threading.Barrier(20)
    errors: list[BaseException] = []

    def create(index: int) -> None:
        try:
            barrier.wait()
            services.create_character(
                campaign=campaign,
                actor=users["gm"],
                name=f"Extra {index}",
                traits={"attributes": {"Strength": 2}},
            )
        except BaseException as error:  # reported below, with the thread's traceback
            errors.append(error)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=create, args=(i,)) for i in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert seqs(campaign) == list(range(1, start + 21))
    assert Character.objects.filter(campaign=campaign).count() == 20
    assert not verify_campaigns().problems


def test_append_event_projects_in_the_same_transaction(make_campaign, users):
    campaign = make_campaign()
    with pytest.raises(RuntimeError, match="after the append"), transaction.atomic():
        lock_stream(campaign.pk)
        append_event(
            campaign=campaign,
            type="campaign.renamed",
            payload={"name": "Renamed"},
            actor_id=users["gm"].pk,
        )
        raise RuntimeError("the service failed after the append")
    campaign.refresh_from_db()
    assert campaign.name == "Test table"
    assert not Event.objects.filter(campaign=campaign, type="campaign.renamed").exists()
