"""The controls around the feed follow the server's state live: «Roll again» only while a
session is open, the roll form's Willpower count and odds after what changes them, and the
result area's messages (a lost connection, a blind roll)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .test_table import LIVE, cofd_table, item, live, roll
from .test_table_in_use import through_the_server

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]


def test_roll_again_is_offered_only_while_a_session_is_open(accounts, open_page, server):
    campaign, _ = cofd_table(accounts, manual_dice=True)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    roll(alice, "Wits", label="Read the stones", faces="8 2 3")
    again = item(alice, "Read the stones").get_by_role("button", name="Roll again")
    expect(again).to_be_visible()

    through_the_server(server, accounts["gm"], campaign, "sessions/end/", {})
    expect(alice.locator("#sessionbar")).to_contain_text("The GM starts a session", timeout=LIVE)
    expect(again).to_have_count(0, timeout=LIVE)
    alice.reload()
    live(alice)
    expect(item(alice, "Read the stones")).to_be_visible()
    expect(again).to_have_count(0)

    through_the_server(server, accounts["gm"], campaign, "sessions/", {"title": "Saturday"})
    expect(again).to_be_visible(timeout=LIVE)
