"""Tampering with the stored log behind the append-only triggers' back: verify_log names it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from campaign.models import Campaign, SessionSecret
from eventlog import append_only
from eventlog.models import Event
from rolls.trust.stored_log import verify_campaigns
from tests.eventlog.forgery import payload_column
from tests.rolls.trust.conftest import roll

Tamper = Callable[[Campaign], tuple[int, str, str]]


def _raw(statement: str, params: list) -> None:
    """Change rows as someone with raw database access could (see tests/test_eventlog.py)."""
    append_only.drop(connection)
    try:
        with connection.cursor() as cursor:
            cursor.execute(statement, params)
    finally:
        append_only.install(connection)


def _open_roll(campaign: Campaign) -> Event:
    return Event.objects.get(campaign=campaign, type="check.rolled", payload__label="in the open")


def _rewrite(event: Event) -> None:
    _raw(
        f"UPDATE campaign_event SET {payload_column()} = %s WHERE campaign_id = %s AND seq = %s",
        [json.dumps(event.payload), event.campaign_id, event.seq],
    )


def face(campaign: Campaign) -> tuple[int, str, str]:
    event = _open_roll(campaign)
    roll = event.payload["rolls"][0]
    roll["faces"][0] = roll["faces"][0] % 10 + 1
    _rewrite(event)
    return event.seq, event.type, "do not follow from its key and client seed"


def outcome(campaign: Campaign) -> tuple[int, str, str]:
    event = _open_roll(campaign)
    result = event.payload["rolls"][0]["result"]
    result["outcome"] = (
        "exceptional_success" if result["outcome"] != "exceptional_success" else "failure"
    )
    _rewrite(event)
    return event.seq, event.type, "the result does not follow from the faces: outcome is"


def payload_field(campaign: Campaign) -> tuple[int, str, str]:
    event = _open_roll(campaign)
    event.payload["rolls"][0]["character_name"] = "Someone else"
    _rewrite(event)
    return event.seq, event.type, "hash mismatch"


def roll_key(campaign: Campaign) -> tuple[int, str, str]:
    event = _open_roll(campaign)
    event.payload["dice_key"]["key"] = os.urandom(32).hex()
    _rewrite(event)
    return event.seq, event.type, "its roll key does not match the commitment published by #"


def order(campaign: Campaign) -> tuple[int, str, str]:
    seq = _open_roll(campaign).seq
    moved = Event.objects.get(campaign=campaign, seq=seq + 1)
    where = "WHERE campaign_id = %s AND seq = %s"
    _raw(f"UPDATE campaign_event SET seq = %s {where}", [10**9, campaign.pk, seq])
    _raw(f"UPDATE campaign_event SET seq = %s {where}", [seq, campaign.pk, seq + 1])
    _raw(f"UPDATE campaign_event SET seq = %s {where}", [seq + 1, campaign.pk, 10**9])
    return seq, moved.type, "prev_hash does not link to the previous event's hash"


def deletion(campaign: Campaign) -> tuple[int, str, str]:
    seq = _open_roll(campaign).seq
    _raw("DELETE FROM campaign_event WHERE campaign_id = %s AND seq = %s", [campaign.pk, seq])
    after = Event.objects.get(campaign=campaign, seq=seq + 1)
    return seq + 1, after.type, f"events {seq}..{seq} are missing"


@pytest.mark.parametrize(
    "tamper",
    [face, outcome, payload_field, roll_key, order, deletion],
    ids=lambda tamper: tamper.__name__,
)
def test_verify_log_names_the_tampered_event(play, tamper: Tamper, capsys):
    campaign = play("cofd")
    assert not verify_campaigns().problems
    seq, event_type, expected = tamper(campaign)

    report = verify_campaigns(rehash=True)  # below the checkpoint: an edit in place
    named = [p for p in report.problems if (p.seq, p.event_type) == (seq, event_type)]
    assert any(expected in p.what for p in named), [str(p) for p in report.problems]
    with pytest.raises(CommandError, match="failed verification"):
        call_command("verify_log")  # the problem stays in the checkpoint
    out = capsys.readouterr().out
    assert f"FAIL campaign {campaign.pk}, event #{seq} ({event_type}): " in out


def test_only_the_tampered_campaign_fails(play):
    campaign = play("cofd")
    untouched = play("age", name="An untouched table")
    face(campaign)
    report = verify_campaigns()
    assert {p.campaign for p in report.problems} == {campaign.pk}
    assert report.failed_campaigns == 1
    assert [r.ok for r in report.campaigns] == [False, True]
    (row,) = [r for r in report.sessions if r["campaign"] == untouched.pk]
    assert row["ok"] and row["closed"] and row["proven"] == row["server_rolls"] > 0
    (bad,) = [r for r in report.sessions if r["campaign"] == campaign.pk]
    seq = _open_roll(campaign).seq
    assert not bad["ok"] and bad["what"].startswith(f"campaign {campaign.pk}, event #{seq} ")


def test_a_swapped_server_secret_is_caught_while_the_session_is_still_open(play, users):
    """An operator who swaps the stored seed mid-session (to choose the next faces) breaks the
    key commitment chain at the next roll; verify_log says so without printing either seed."""
    campaign = play("storyteller", end=False)
    secret = SessionSecret.objects.get(campaign=campaign)
    new_seed = os.urandom(32)
    SessionSecret.objects.filter(pk=secret.pk).update(seed=new_seed)
    check = roll(campaign, users["gm"], pool=3)
    report = verify_campaigns()
    (problem,) = report.problems
    assert (problem.seq, problem.event_type) == (check.seq, "check.rolled")
    assert "its roll key does not match the commitment published by #" in problem.what
    printed = "\n".join(report.lines)
    assert new_seed.hex() not in printed and bytes(secret.seed).hex() not in printed
