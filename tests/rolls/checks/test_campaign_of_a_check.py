"""A check row has no foreign key to its campaign in the database (rolls.0010): it copies its
event's campaign, and the event's key holds that campaign. So a campaign with checks cannot be
deleted, through the ORM or in raw SQL, and no check row outlives its campaign."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import ProtectedError

from campaign.models import Campaign
from eventlog.models import Event
from rolls.models import Check


def test_a_campaign_with_checks_cannot_be_deleted(table):
    play = table("cofd", manual=False)
    play.roll("alice", traits=["Wits", "Occult"])
    campaign_id = play.campaign.pk
    with pytest.raises(ProtectedError):
        Campaign.objects.filter(pk=campaign_id).delete()
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {Campaign._meta.db_table} WHERE id = %s", [campaign_id])
        _check_keys_now(cursor, Event._meta.db_table)
    assert Campaign.objects.filter(pk=campaign_id).exists()
    assert Check.objects.filter(campaign_id=campaign_id).count() == 1


def _check_keys_now(cursor, table: str) -> None:
    """Check ``table``'s foreign keys to the campaign now, not at the commit the test's
    transaction never reaches (and only those: the members' keys would refuse it too)."""
    if connection.vendor != "postgresql":
        connection.check_constraints(table_names=[table])
        return
    constraints = connection.introspection.get_constraints(cursor, table)
    keys = [
        name
        for name, constraint in constraints.items()
        if constraint["foreign_key"] == (Campaign._meta.db_table, "id")
    ]
    assert keys, f"{table} has no foreign key to the campaign"
    cursor.execute(f"SET CONSTRAINTS {', '.join(keys)} IMMEDIATE")
