"""Deleting an account in the admin (its delete page and the bulk action) writes, in each
campaign the account was tied to, that its characters lost their owner and that it left; the
log still verifies and rebuilds the same table. The campaign's only GM is refused, with the
reason, and nothing changes; a bulk deletion is all or nothing."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.core.management import call_command
from django.db import connection, transaction
from django.db.models import ProtectedError
from django.test import Client

from accounts import admin as accounts_admin
from accounts.deletion import account_ties, delete_user
from campaign import services
from campaign.errors import Conflict
from campaign.models import Campaign, Character, Membership
from eventlog.models import Event
from eventlog.stream import lock_stream
from rolls.checks import services as rolls
from tests.accounts.conftest import admin_post, staff_client
from tests.eventlog.tables import assert_rebuild_equals_live
from tests.live.conftest import WAIT, in_db, open_feed
from tests.security.test_live_security import _closed_with

pytestmark = pytest.mark.django_db

SHEET = {"attributes": {"Wits": 3}, "skills": {"Occult": 2}}
CHANGELIST = "/admin/auth/user/"


def _delete_page(user) -> str:
    return f"{CHANGELIST}{user.pk}/delete/"


@pytest.fixture
def root(db) -> Client:
    return staff_client()


@pytest.fixture
def campaign(make_campaign, users) -> Campaign:
    """The test table with a session, alice's hero with one roll, and an NPC of the GM's."""
    campaign = make_campaign("cofd", {"manual_dice": True})
    services.start_session(campaign=campaign, actor=users["gm"])
    hero = services.create_character(
        campaign=campaign, actor=users["alice"], name="Hero", traits=SHEET
    )
    services.create_character(campaign=campaign, actor=users["gm"], name="NPC", traits=SHEET)
    rolls.check_roll(
        campaign=campaign,
        actor=users["alice"],
        request={"character": str(hero.pk), "traits": ["Wits", "Occult"], "faces": [8, 2, 3, 4, 5]},
    )
    campaign.refresh_from_db()
    return campaign


def _events(campaign: Campaign, after: int) -> list[tuple[str, dict]]:
    return [
        (event.type, event.payload)
        for event in Event.objects.filter(campaign=campaign, seq__gt=after).order_by("seq")
    ]


def _exists(user) -> bool:
    return get_user_model().objects.filter(pk=user.pk).exists()


def test_deleting_a_player_writes_that_they_left_and_keeps_their_characters(
    campaign, users, root, capsys
):
    alice = users["alice"]
    other = services.create_campaign(name="Elsewhere", system="cofd", created_by=users["boris"])
    services.join_campaign(invite_code=other.invite_code, user=alice)
    left_behind = services.create_character(
        campaign=other, actor=alice, name="Left behind", traits=SHEET
    )
    services.leave_campaign(campaign=other, actor=alice, user_id=alice.pk)  # keeps her character
    other.refresh_from_db()
    heads = {campaign.pk: campaign.head_seq, other.pk: other.head_seq}

    page = root.get(_delete_page(alice)).content.decode()
    assert "leaves «Test table» (recorded in its log)" in page
    assert "character «Hero» stays in its campaign, with no owner" in page
    assert "character «Left behind» stays in its campaign, with no owner" in page
    answer = root.post(_delete_page(alice), {"post": "yes"})

    assert answer.status_code == 302 and not _exists(alice)
    hero = Character.objects.get(campaign=campaign, name="Hero")
    assert hero.owner_id is None and Character.objects.get(pk=left_behind.pk).owner_id is None
    assert _events(campaign, heads[campaign.pk]) == [
        ("character.changed", {"character_id": str(hero.pk), "owner_id": None}),
        ("member.left", {"user_id": alice.pk}),
    ]
    assert _events(other, heads[other.pk]) == [
        ("character.changed", {"character_id": str(left_behind.pk), "owner_id": None}),
    ]
    assert not Membership.objects.filter(user_id=alice.pk).exists()
    call_command("verify_log")
    assert "OK:" in capsys.readouterr().out  # it raises CommandError on any problem
    for table in (campaign, other):
        assert_rebuild_equals_live(table.pk)
    # The table goes on: the GM's pages and API read a log that names a deleted account.
    gm = Client()
    gm.force_login(users["gm"])
    for path in (
        f"/campaigns/{campaign.pk}/gm/",
        f"/campaigns/{campaign.pk}/audit/",
        f"/campaigns/{campaign.pk}/report/",
        f"/api/campaigns/{campaign.pk}/events/",
        f"/api/campaigns/{campaign.pk}/export.csv",
    ):
        assert gm.get(path).status_code == 200, path


def test_the_only_gm_is_refused_with_the_reason_and_nothing_changes(campaign, users, root):
    gm = users["gm"]
    page = root.get(_delete_page(gm)).content.decode()
    refusal = "gm is the only game master of «Test table»: make another member a game master"
    assert refusal in page and "Cannot delete" in page
    answer = root.post(_delete_page(gm), {"post": "yes"})
    assert answer.status_code == 200 and refusal in answer.content.decode()
    assert _exists(gm)
    assert Campaign.objects.get(pk=campaign.pk).head_seq == campaign.head_seq


def test_a_gm_stepping_down_after_the_confirmation_page_gets_a_message_not_an_error(
    campaign, users, root, monkeypatch
):
    gm, alice = users["gm"], users["alice"]
    services.change_role(campaign=campaign, actor=gm, user_id=alice.pk, role="gm")
    confirmed = account_ties(user=gm)  # two GMs: the page offers to delete gm
    assert confirmed.refusal() is None
    services.change_role(campaign=campaign, actor=alice, user_id=alice.pk, role="player")
    campaign.refresh_from_db()
    # The step-down lands between the page's reading and the deletion's lock.
    monkeypatch.setattr(accounts_admin, "account_ties", lambda user: confirmed)

    answer = root.post(_delete_page(gm), {"post": "yes"})

    assert answer.status_code == 302 and answer["Location"] == _delete_page(gm)
    shown = [str(message) for message in get_messages(answer.wsgi_request)]
    assert shown == [
        "gm is the only game master of «Test table»: make another member a game master first"
    ]
    assert _exists(gm) and Membership.objects.filter(user_id=gm.pk, role="gm").exists()
    assert Campaign.objects.get(pk=campaign.pk).head_seq == campaign.head_seq


def _bulk(*users) -> dict:
    return {"action": "delete_selected", "_selected_action": [user.pk for user in users]}


def test_a_bulk_deletion_with_one_refused_account_deletes_nobody(campaign, users, root):
    gm, alice, boris = users["gm"], users["alice"], users["boris"]
    page = root.post(CHANGELIST, _bulk(alice, gm)).content.decode()
    assert "gm is the only game master of «Test table»" in page and "Cannot delete" in page
    answer = root.post(CHANGELIST, {**_bulk(alice, gm), "post": "yes"})
    assert answer.status_code == 200 and "gm is the only game master" in answer.content.decode()
    assert _exists(gm) and _exists(alice)
    assert Campaign.objects.get(pk=campaign.pk).head_seq == campaign.head_seq

    answer = root.post(CHANGELIST, {**_bulk(alice, boris), "post": "yes"})
    assert answer.status_code == 302 and not _exists(alice) and not _exists(boris)
    left = [p["user_id"] for t, p in _events(campaign, campaign.head_seq) if t == "member.left"]
    assert sorted(left) == sorted([alice.pk, boris.pk])
    assert_rebuild_equals_live(campaign.pk)


def test_a_refusal_arising_after_the_bulk_confirmation_deletes_nobody(
    campaign, users, root, monkeypatch
):
    gm, alice = users["gm"], users["alice"]
    monkeypatch.setattr(accounts_admin, "account_ties", lambda user: account_ties(user=alice))
    answer = root.post(CHANGELIST, {**_bulk(alice, gm), "post": "yes"})
    assert answer.status_code == 302 and answer["Location"] == CHANGELIST
    shown = [str(message) for message in get_messages(answer.wsgi_request)]
    assert shown == [
        "gm is the only game master of «Test table»: make another member a game master first"
    ]
    assert _exists(gm) and _exists(alice)
    assert Membership.objects.filter(user_id=alice.pk).exists()
    assert Campaign.objects.get(pk=campaign.pk).head_seq == campaign.head_seq


def test_a_raw_delete_cannot_bypass_the_log(campaign, users):
    with pytest.raises(ProtectedError):
        users["alice"].delete()
    with pytest.raises(ProtectedError):
        get_user_model().objects.filter(pk=users["boris"].pk).delete()
    assert Membership.objects.filter(campaign=campaign).count() == 4


def test_the_refusal_is_in_russian_for_a_russian_admin(campaign, users, root):
    root.defaults["HTTP_ACCEPT_LANGUAGE"] = "ru"
    page = root.get(_delete_page(users["gm"])).content.decode()
    assert "gm — единственный мастер кампании «Test table»" in page


@pytest.mark.django_db(transaction=True)
async def test_the_table_sees_a_deleted_player_leave_and_their_socket_closes(admin_server, table):
    alice, hero = table.users["alice"], table.characters["alice"]
    root = await in_db(staff_client)
    gm = await open_feed(admin_server.url(table.id), table.tokens["gm"])
    mine = await open_feed(admin_server.url(table.id), table.tokens["alice"])
    head = table.campaign.head_seq

    deleted = await admin_post(admin_server, root, _delete_page(alice), {"post": "yes"})

    assert deleted.status_code == 302, deleted.text[:2000]
    assert await asyncio.wait_for(_closed_with(mine), WAIT) == 4403  # no longer a member
    shown = [(e["type"], e["payload"]) for e in await gm.through(head + 2)]
    assert shown[-2:] == [
        ("character.changed", {"character_id": str(hero.pk), "owner_id": None}),
        ("member.left", {"user_id": alice.pk}),
    ]
    assert (await gm.command("ping"))["type"] == "pong"
    await gm.close()
    # Rebuilt in a transaction that commits (the database checks its foreign keys then): the log
    # still names the deleted account as a member until its member.left.
    await in_db(assert_rebuild_equals_live, table.id)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_step_down_committed_while_the_deletion_waits_for_the_lock_is_seen(make_campaign, users):
    """PostgreSQL, two connections: the other GM steps down holding the stream lock; the
    deletion of the GM waits for it, then reads the table as it is now and refuses."""
    campaign = make_campaign()
    gm, alice = users["gm"], users["alice"]
    services.change_role(campaign=campaign, actor=gm, user_id=alice.pk, role="gm")
    root = get_user_model().objects.create_superuser("root", password="root-password")
    locked = threading.Event()

    def step_down() -> None:
        try:
            with transaction.atomic():
                lock_stream(campaign.pk)
                locked.set()
                time.sleep(0.5)  # the deletion is waiting for the lock meanwhile
                services.change_role(
                    campaign=campaign, actor=alice, user_id=alice.pk, role="player"
                )
        finally:
            connection.close()

    stepping = threading.Thread(target=step_down)
    stepping.start()
    assert locked.wait(WAIT)
    with pytest.raises(Conflict) as refusal:
        delete_user(user=gm, by=root)
    stepping.join()
    assert refusal.value.message == (
        "gm is the only game master of «Test table»: make another member a game master first"
    )
    assert _exists(gm)
    assert list(Membership.objects.filter(campaign=campaign, role="gm").values_list("user_id")) == [
        (gm.pk,)
    ]
    assert not Event.objects.filter(campaign=campaign, type="member.left").exists()
