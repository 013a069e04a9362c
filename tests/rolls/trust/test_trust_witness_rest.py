"""Witnesses over the REST log (the pages' polling fallback): ``GET …/events/?after=<seq>:<hash>``
answers 409 ``history_changed`` when the log no longer holds what the client saw, as the socket
does (docs/websocket.md, "Witnesses")."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import translation

from campaign import services
from campaign.models import Campaign
from eventlog.models import Event
from tests.live.test_live_witness import restore_older_backup, rewrite_and_rehash
from tests.rolls.trust.conftest import TRAITS, roll

pytestmark = pytest.mark.django_db(transaction=True)


def _events(campaign: Campaign, user, after: str) -> tuple[int, dict | list]:
    client = Client()
    client.force_login(user)
    answer = client.get(f"/api/campaigns/{campaign.pk}/events/?after={after}")
    return answer.status_code, answer.json()


def _hash(campaign: Campaign, seq: int) -> str:
    return Event.objects.get(campaign=campaign, seq=seq).hash


def test_a_witness_that_holds_gets_the_events_after_it(play, users):
    campaign = play("cofd", end=False)
    seen = campaign.head_seq - 2
    status, events = _events(campaign, users["alice"], f"{seen}:{_hash(campaign, seen)}")
    assert status == 200
    assert [e["seq"] for e in events] == [seen + 1, seen + 2]
    assert events[0]["prev_hash"] == _hash(campaign, seen)
    assert _events(campaign, users["alice"], f"0:{'0' * 64}")[0] == 200  # the genesis


def test_a_rewritten_and_rehashed_history_is_answered_history_changed(play, users):
    campaign = play("cofd", end=False)
    seen = campaign.head_seq
    witness = _hash(campaign, seen)
    public = Event.objects.filter(campaign=campaign, type="check.rolled", visibility="public")
    rewrite_and_rehash(campaign.pk, public.first().seq)
    status, body = _events(campaign, users["alice"], f"{seen}:{witness}")
    assert status == 409
    assert body["code"] == "history_changed" and (body["seq"], body["hash"]) == (seen, witness)
    assert body["head"] == seen
    message = "the log no longer holds event #{seq} with the hash this client saw"
    with translation.override("ru"):  # the default language: the answer is in Russian
        assert body["after"] == [translation.gettext(message).format(seq=seen)]


def test_a_restored_older_backup_played_on_is_answered_history_changed(play, users):
    campaign = play("age", end=False)
    seen, backup_at = campaign.head_seq, campaign.head_seq - 3
    witness = _hash(campaign, seen)
    restore_older_backup(campaign.pk, backup_at)
    campaign = Campaign.objects.get(pk=campaign.pk)
    hero = campaign.characters.get(name="Hero")
    status, body = _events(campaign, users["alice"], f"{seen}:{witness}")
    assert (status, body["code"], body["head"]) == (409, "history_changed", backup_at)  # behind
    # The table plays on: seq `seen` now holds another event.
    services.change_options(campaign=campaign, actor=users["gm"], changes={"manual_dice": False})
    for _ in range(3):
        roll(campaign, users["alice"], character=str(hero.pk), **TRAITS["age"])
    head = Campaign.objects.get(pk=campaign.pk).head_seq
    assert head > seen
    status, body = _events(campaign, users["alice"], f"{seen}:{witness}")
    assert (status, body["code"], body["head"]) == (409, "history_changed", head)


@pytest.mark.parametrize("after", ["-1", "5:", "5:xyz", "5:" + "A" * 64, "x:" + "0" * 64])
def test_a_malformed_witness_is_refused_naming_after(play, users, after):
    campaign = play("d6pool", end=False)
    status, body = _events(campaign, users["alice"], after)
    assert status == 400 and body["code"] == "invalid" and "after" in body
