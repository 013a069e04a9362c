"""The application's database role can append to the log and nothing more: every way the
superuser app could rewrite history (issue #16) is refused to it by PostgreSQL itself."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection

from campaign import services
from eventlog.dbroles import grant_app_role
from eventlog.models import Event
from rolls.checks import services as rolls

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ATTACKS = {
    "UPDATE": "UPDATE campaign_event SET visibility = 'public'",
    "DELETE": "DELETE FROM campaign_event WHERE seq = (SELECT max(seq) FROM campaign_event)",
    "TRUNCATE": "TRUNCATE campaign_event",
    "disable the triggers": "ALTER TABLE campaign_event DISABLE TRIGGER ALL",
    "drop a trigger": "DROP TRIGGER campaign_event_no_change ON campaign_event",
    "replica mode": "SET session_replication_role = replica",
    "replace a seed": "UPDATE campaign_sessionsecret SET seed = '\\x00'",
    "delete a seed": "DELETE FROM campaign_sessionsecret",
    "a new trigger function": "CREATE FUNCTION public.f() RETURNS int AS 'SELECT 1' LANGUAGE sql",
    "become the owner": f"SET ROLE {connection.settings_dict['USER'] or 'postgres'}",
    "record a migration": "DELETE FROM django_migrations",
}


@pytest.fixture
def app_role():
    """A login role for this test database only, granted as `manage.py setup_database` does."""
    name = f"tc_app_{connection.settings_dict['NAME']}"[:63]
    grant_app_role(connection, role=name, password=None)
    grant_app_role(connection, role=name, password=None)  # idempotent: a second deploy is fine
    yield name
    with connection.cursor() as cursor:
        cursor.execute(f"DROP OWNED BY {connection.ops.quote_name(name)}")
        cursor.execute(f"DROP ROLE {connection.ops.quote_name(name)}")


def _connect_as(role: str) -> psycopg.Connection:
    settings = connection.settings_dict
    return psycopg.connect(
        host=settings["HOST"] or "127.0.0.1",
        port=settings["PORT"] or 5432,
        dbname=settings["NAME"],
        user=role,
        autocommit=True,
    )


def _reconnect() -> None:
    connection.close()
    if hasattr(connection, "close_pool"):
        connection.close_pool()


def _played(make_campaign, users):
    campaign = make_campaign("cofd")
    services.start_session(campaign=campaign, actor=users["gm"])
    rolls.check_roll(campaign=campaign, actor=users["gm"], request={"pool": 3})
    return campaign


@pytest.mark.parametrize("attack", ATTACKS)
def test_the_app_role_cannot_rewrite_history(attack, app_role, make_campaign, users) -> None:
    campaign = _played(make_campaign, users)
    before = list(Event.objects.filter(campaign=campaign).values_list("seq", "hash"))
    with _connect_as(app_role) as app:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            app.execute(ATTACKS[attack])
        assert app.execute("SELECT count(*) FROM campaign_event").fetchone()[0] == len(before)
    assert list(Event.objects.filter(campaign=campaign).values_list("seq", "hash")) == before


def test_the_app_plays_a_session_as_the_app_role(app_role, make_campaign, users) -> None:
    """What the application does (rolls, sessions, projections) needs nothing it lacks."""
    campaign = _played(make_campaign, users)
    before = Event.objects.filter(campaign=campaign).count()
    settings = connection.settings_dict
    owner, options = settings["USER"], settings.get("OPTIONS", {})
    _reconnect()
    # A pool would hand back the owner's connections: connect afresh, without one, as the app.
    settings["USER"], settings["OPTIONS"] = (
        app_role,
        {k: v for k, v in options.items() if k != "pool"},
    )
    try:
        check = rolls.check_roll(
            campaign=campaign, actor=users["gm"], request={"pool": 5, "visibility": "blind"}
        )
        rolls.reveal_check(campaign=campaign, actor=users["gm"], seq=check.seq)
        services.end_session(campaign=campaign, actor=users["gm"])
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user")
            assert cursor.fetchone()[0] == app_role
    finally:
        _reconnect()
        settings["USER"], settings["OPTIONS"] = owner, options
    assert Event.objects.filter(campaign=campaign).count() == before + 3
