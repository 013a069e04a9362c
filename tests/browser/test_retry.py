"""A roll whose answer is lost on the way back (the server committed it, the page saw a network
error): the page retries with the same Idempotency-Key and the table gets exactly one roll."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from rolls.models import Check
from tests.browser.test_table import cofd_table, item, live, roll

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]


def test_a_roll_whose_answer_was_lost_is_retried_without_rolling_twice(accounts, open_page):
    campaign, _ = cofd_table(accounts)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    keys: list[str] = []

    def lose_the_first_answer(route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        keys.append(route.request.headers.get("idempotency-key", ""))
        if len(keys) == 1:
            route.fetch()  # the server rolls and answers; the page never hears of it
            route.abort("connectionreset")
        else:
            route.continue_()

    alice.route(f"**/api/campaigns/{campaign.pk}/checks/", lose_the_first_answer)
    roll(alice, "Wits", "Occult", label="Lost in the post")
    expect(item(alice, "Lost in the post")).to_be_visible()  # from the feed: it was rolled
    for _ in range(100):  # the page retries after a pause
        if len(keys) == 2:
            break
        alice.wait_for_timeout(100)
    alice.wait_for_timeout(300)  # and has had time to hear the (replayed) answer
    assert len(keys) == 2 and keys[0] == keys[1] and len(keys[0]) == 32
    assert Check.objects.filter(campaign=campaign, label="Lost in the post").count() == 1
    expect(item(alice, "Lost in the post")).to_have_count(1)
