"""After the session: a player opens the luck report and the chronicle in a real browser."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from campaign import services
from rolls.checks import services as roll_services
from tests.browser.test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

SHEET = {"attributes": {"Wits": 3}, "skills": {"Occult": 2}}


def test_a_player_reads_the_luck_report_and_the_chronicle(accounts, open_page):
    gm = accounts["gm"]
    campaign = services.create_campaign(name="Ashwood", system="cofd", created_by=gm)
    services.join_campaign(invite_code=campaign.invite_code, user=accounts["alice"])
    hero = services.create_character(
        campaign=campaign, actor=gm, name="Marianne", traits=SHEET,
        owner_id=accounts["alice"].pk,
    )  # fmt: skip
    services.start_session(campaign=campaign, actor=gm, title="Friday")
    services.start_chapter(campaign=campaign, actor=gm, title="The crypt")
    request = {"character": str(hero.pk), "traits": ["Wits", "Occult"]}
    for label in ("read the runes", "open the door"):
        roll_services.check_roll(campaign=campaign, actor=accounts["alice"],
                                 request={**request, "label": label})  # fmt: skip
    roll_services.check_roll(
        campaign=campaign, actor=gm, request={**request, "label": "secret", "visibility": "blind"}
    )
    services.end_session(campaign=campaign, actor=gm)

    page = open_page("alice", f"/campaigns/{campaign.pk}/sessions/1/report/")
    expect(page.get_by_role("heading", name="Luck report")).to_be_visible()
    expect(page.locator("svg.strip circle")).to_have_count(2)  # her two rolls, not the blind one
    expect(page.locator("figure.histogram")).to_have_count(1)
    expect(page.get_by_text("Marianne").first).to_be_visible()
    assert violations(page) == []  # axe: no critical or serious violation

    page.get_by_role("link", name="Chronicle").click()
    page.wait_for_url("**/sessions/1/chronicle/")
    entries = page.locator(".chronicle-entry")
    expect(entries.filter(has_text="read the runes")).to_have_count(1)
    expect(entries.filter(has_text="open the door")).to_have_count(1)
    expect(page.get_by_text("secret", exact=False)).to_have_count(0)
    expect(entries.filter(has_text="hidden roll")).to_have_count(1)
    expect(page.locator(".proof")).to_contain_text("Receipt")
    assert violations(page) == []
    with page.expect_download() as download:
        page.get_by_role("link", name="Download Markdown").click()
    assert "read the runes" in download.value.path().read_text()
