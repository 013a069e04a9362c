"""rebuild_projections checks the chain as it reads and refuses a tampered log (without --force),
so a forged event never reaches the read models that every page shows."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from campaign import services
from eventlog import append_only
from eventlog.models import Event
from rolls.checks import services as roll_services
from rolls.models import Check
from tests.eventlog.forgery import payload_column

pytestmark = pytest.mark.django_db

SHEET = {"attributes": {"Wits": 3}, "skills": {"Occult": 2}}


def _raw(statement: str, params: list) -> None:
    """Change rows as someone with raw database access could."""
    append_only.drop(connection)
    try:
        with connection.cursor() as cursor:
            cursor.execute(statement, params)
    finally:
        append_only.install(connection)


@pytest.fixture
def rolled(make_campaign, users) -> Check:
    campaign = make_campaign("cofd", {"manual_dice": True})
    services.start_session(campaign=campaign, actor=users["gm"])
    hero = services.create_character(
        campaign=campaign, actor=users["alice"], name="Hero", traits=SHEET
    )
    check = roll_services.check_roll(
        campaign=campaign,
        actor=users["alice"],
        request={"character": str(hero.pk), "traits": ["Wits", "Occult"], "faces": [1, 2, 3, 4, 5]},
    )
    roll_services.check_roll(  # one more after it, so the forged one is mid-chain
        campaign=campaign,
        actor=users["alice"],
        request={"character": str(hero.pk), "traits": ["Wits"], "faces": [1, 2, 3]},
    )
    assert check.outcome == "failure"
    return check


def outcome_of(check: Check) -> str:
    """The read model's outcome (a rebuild replaces the row)."""
    return Check.objects.get(campaign_id=check.campaign_id, seq=check.seq).outcome


def forge_success(check: Check) -> None:
    event = Event.objects.get(campaign_id=check.campaign_id, seq=check.seq)
    event.payload["rolls"][0]["result"]["outcome"] = "exceptional_success"
    _raw(
        f"UPDATE campaign_event SET {payload_column()} = %s WHERE campaign_id = %s AND seq = %s",
        [json.dumps(event.payload), check.campaign_id, check.seq],
    )


def test_a_forged_outcome_is_refused_and_not_copied_into_the_read_model(rolled, capsys):
    forge_success(rolled)
    with pytest.raises(CommandError, match="not rebuilt"):
        call_command("rebuild_projections")
    assert f"seq {rolled.seq}: its hash does not match" in capsys.readouterr().err
    assert outcome_of(rolled) == "failure"


def test_a_missing_event_is_refused(rolled, capsys):
    _raw("DELETE FROM campaign_event WHERE campaign_id = %s AND seq = %s", [rolled.campaign_id, 2])
    with pytest.raises(CommandError):
        call_command("rebuild_projections", campaign=[rolled.campaign_id])
    assert "seq 2 is missing" in capsys.readouterr().err


def test_force_rebuilds_anyway_and_says_what_it_copied(rolled, capsys):
    forge_success(rolled)
    call_command("rebuild_projections", force=True)
    assert f"warning (--force): campaign {rolled.campaign_id}, seq {rolled.seq}" in (
        capsys.readouterr().err
    )
    assert outcome_of(rolled) == "exceptional_success"


def test_an_intact_log_rebuilds(rolled, capsys):
    Check.objects.filter(pk=rolled.pk).update(outcome="exceptional_success")  # a bad read model
    call_command("rebuild_projections")
    assert outcome_of(rolled) == "failure"
    assert "rebuilt" in capsys.readouterr().out


@pytest.mark.postgres
def test_the_rewritten_tables_are_analyzed(rolled):
    """The planner's statistics count the rows a rebuild wrote (without them, PostgreSQL planned
    a rebuilt campaign's reads for a table of the size it had before)."""
    call_command("rebuild_projections", stdout=None)
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'rolls_check'")
        assert cursor.fetchone()[0] == 2
