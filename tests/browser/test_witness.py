"""A page is a witness: it keeps the last hash it saw, and when the server's log no longer holds
that history (here: an older backup restored, then the table played on) it tells its user."""

from __future__ import annotations

import contextlib

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from campaign.models import Campaign
from rolls.checks import services as roll_services
from tests.browser.test_table import cofd_table, live, roll
from tests.live.test_live_witness import restore_older_backup, rewrite_and_rehash

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]


def test_a_restored_older_backup_is_noticed_by_an_open_page(accounts, open_page):
    campaign, characters = cofd_table(accounts)
    backup_at = campaign.head_seq
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    roll(alice, "Wits", label="before the restore")
    head = backup_at + 1
    key = f"tc-witness:{campaign.pk}"
    kept = f"JSON.parse(localStorage.getItem('{key}') || '{{}}').seq"
    for _ in range(100):  # polled from here: the page's CSP forbids evaluating strings in it
        if alice.evaluate(kept) == head:
            break
        alice.wait_for_timeout(100)
    assert alice.evaluate(kept) == head

    restore_older_backup(campaign.pk, backup_at)
    campaign = Campaign.objects.get(pk=campaign.pk)
    for _ in range(2):  # the table plays on: seq `head` now holds another event
        roll_services.check_roll(
            campaign=campaign,
            actor=accounts["boris"],
            request={"character": str(characters["boris"].pk), "traits": ["Wits"]},
        )

    # A reconnect: the page resumes with after=<seq>:<hash> (the live frames of the new rolls may
    # have made it notice and reload itself first, which aborts this reload).
    with contextlib.suppress(PlaywrightError):
        alice.reload()
    alarm = alice.locator(".history-alarm")
    expect(alarm).to_be_visible(timeout=15_000)
    expect(alarm).to_contain_text("The history of this campaign changed")
    live(alice)  # and it carries on with the log as it is now


def test_a_polling_page_notices_a_rewritten_history(accounts, open_page):
    """Without a WebSocket the page polls the REST log, and is a witness all the same: each poll
    asks from the last (seq, hash) it saw, and the server answers history_changed."""
    campaign, _ = cofd_table(accounts)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    alice.context.add_init_script("delete window.WebSocket;")
    alice.reload()
    assert alice.evaluate("'WebSocket' in window") is False
    live(alice)  # through polling
    before = Campaign.objects.get(pk=campaign.pk).head_seq
    roll(alice, "Wits", label="while polling")
    key = f"tc-witness:{campaign.pk}"
    kept = f"JSON.parse(localStorage.getItem('{key}') || '{{}}').seq"
    for _ in range(100):
        head = Campaign.objects.get(pk=campaign.pk).head_seq
        if head > before and alice.evaluate(kept) == head:
            break
        alice.wait_for_timeout(100)
    assert alice.evaluate(kept) == head > before

    rewrite_and_rehash(campaign.pk, head)  # the roll turned blind, the chain re-hashed
    alarm = alice.locator(".history-alarm")
    expect(alarm).to_be_visible(timeout=15_000)
    expect(alarm).to_contain_text("The history of this campaign changed")
    live(alice)
