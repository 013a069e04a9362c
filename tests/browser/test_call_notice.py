"""A GM's call for a check reaches a player wherever their page is scrolled: a notice stays in
view while the call's card is out of it, until it is answered or dismissed (Roll it answers from
it, Show me goes to the call), the screen-reader live region says it, and an answer's result
shows where its call was."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .test_table import cofd_table, live
from .test_table_in_use import through_the_server

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]
LIVE = 2_000


def test_a_call_reaches_a_player_scrolled_away_and_its_answer_shows_in_place(
    accounts, open_page, server
):
    campaign, characters = cofd_table(accounts)
    theo = str(characters["boris"].pk)
    boris = open_page("boris", f"/campaigns/{campaign.pk}/play/")
    boris.set_viewport_size({"width": 390, "height": 800})
    live(boris)
    boris.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    notice = boris.locator("#call-notice")
    expect(notice).to_be_hidden()

    def call(label: str) -> None:
        request = {"traits": ["Wits"], "label": label}
        through_the_server(
            server, accounts["gm"], campaign, "calls/", {"characters": [theo], "request": request}
        )

    call("Hear the whisper")
    expect(notice).to_be_visible(timeout=LIVE)
    expect(notice).to_be_in_viewport()
    expect(notice).to_contain_text("The GM calls for a check for Theo: Hear the whisper")
    expect(boris.locator("#announcer")).to_contain_text(
        "The GM calls for a check for Theo: Hear the whisper"
    )
    assert boris.evaluate("window.scrollY") > 500  # nothing pulled the page up by itself

    # Roll it, from the notice: the answer's result is where the call was, and in view.
    notice.get_by_role("button", name="Roll it").click()
    result = boris.locator("#calls .call-result")
    expect(result).to_be_visible(timeout=LIVE)
    expect(result).to_be_in_viewport()
    expect(result).to_contain_text("Your answer to the GM's call — Hear the whisper")
    expect(result.locator(".die")).not_to_have_count(0)  # 10-again may add some
    expect(result.locator(".last-link")).to_be_focused()
    expect(notice).to_be_hidden()
    expect(boris.locator("#calls form.call-mine")).to_have_count(0)
    expect(boris.locator("#feed article.roll", has_text="Hear the whisper")).to_have_count(1)

    # Show me goes to the call and its Roll it; dismissed, the notice goes and the call stays.
    boris.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    call("Smell the smoke")
    expect(notice).to_contain_text("Smell the smoke", timeout=LIVE)
    notice.get_by_role("button", name="Show me").click()
    card = boris.locator("#calls form.call-mine", has_text="Smell the smoke")
    expect(card.get_by_role("button", name="Roll it")).to_be_focused()
    expect(card).to_be_in_viewport()
    # The card in view, the notice would repeat it over the page's header: it goes, and comes
    # back once the card is scrolled away.
    expect(notice).to_be_hidden()
    boris.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    expect(notice).to_contain_text("Smell the smoke", timeout=LIVE)
    notice.get_by_role("button", name="Dismiss").click()
    expect(notice).to_be_hidden()
    boris.evaluate("window.scrollTo(0, 0)")
    boris.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    boris.wait_for_timeout(300)
    expect(notice).to_be_hidden()  # dismissed stays dismissed
    expect(card).to_be_attached()
    result.get_by_role("button", name="Dismiss").click()
    expect(result).to_have_count(0)
