"""The pages draw what the server decided: the Fortune form offers only the changes the balance
covers, and a desperate `all_sixes` roll lights only its 6 (issue #11: no rule in the JS)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from campaign import services

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]
LIVE = 2_000
POST = """async ([url, body]) => {
  const token = document.cookie.match(/csrftoken=([^;]+)/)[1];
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-CSRFToken": token },
    body: JSON.stringify(body),
  });
  return response.status;
}"""


def post_roll(page, campaign, request: dict) -> None:
    """Roll through the server, as the page's own script does (the server publishes it live)."""
    assert page.evaluate(POST, [f"/api/campaigns/{campaign.pk}/checks/", request]) == 201


def table(accounts: dict[str, Any], system: str, traits: dict, **resources: int):
    gm = accounts["gm"]
    campaign = services.create_campaign(
        name="Decisions", system=system, created_by=gm, options={"manual_dice": True}
    )
    if system == "d6pool":
        services.change_options(campaign=campaign, actor=gm, changes={"desperate": "all_sixes"})
    characters = {}
    for player in ("alice", "boris"):
        services.join_campaign(invite_code=campaign.invite_code, user=accounts[player])
        characters[player] = services.create_character(
            campaign=campaign,
            actor=gm,
            name=player.title(),
            traits=traits,
            resources=resources or None,
            owner_id=accounts[player].pk,
        )
    services.start_session(campaign=campaign, actor=gm, title="Friday")
    campaign.refresh_from_db()
    return campaign, characters


def test_the_fortune_form_offers_what_the_balance_covers(accounts, open_page):
    campaign, characters = table(accounts, "age", {"abilities": {"Dexterity": 3}}, fortune=5)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    boris = open_page("boris", f"/campaigns/{campaign.pk}/play/")
    expect(alice.locator("#conn")).to_have_attribute("data-state", "live")
    request = {
        "character": str(characters["alice"].pk),
        "traits": ["Dexterity"],
        "label": "Climb",
        "faces": [1, 2, 3],
    }
    post_roll(alice, campaign, request)
    mine = alice.locator("#feed article.roll", has_text="Climb")
    expect(mine).to_be_visible(timeout=LIVE)
    expect(
        boris.locator("#feed article.roll", has_text="Climb").locator("details.fortune")
    ).to_have_count(0)
    mine.locator("summary", has_text="Spend Fortune").click()
    die = mine.locator("select[name=die]")
    die.select_option("2")  # the Drama Die costs double: 2 x value <= 5
    expect(mine.locator("select[name=value] option")).to_have_text(["1", "2"])
    die.select_option("0")
    expect(mine.locator("select[name=value] option")).to_have_count(5)
    mine.locator("select[name=value]").select_option("5")
    expect(mine.locator(".cost")).to_contain_text("costs 5 Fortune")
    mine.get_by_role("button", name="Spend Fortune").click()
    expect(mine).to_contain_text("set to 5 for 5", timeout=LIVE)
    expect(mine.locator("details.fortune")).to_have_count(0)


def test_a_desperate_all_sixes_roll_lights_only_its_six(accounts, open_page):
    sheet = {"attributes": {"Reaction": 3}, "abilities": {"Shooting": 2}}
    campaign, characters = table(accounts, "d6pool", sheet)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    boris = open_page("boris", f"/campaigns/{campaign.pk}/play/")
    expect(boris.locator("#conn")).to_have_attribute("data-state", "live")
    request = {
        "character": str(characters["alice"].pk),
        "pool": 0,
        "label": "Long shot",
        "faces": [4, 6],
    }
    post_roll(alice, campaign, request)
    shot = boris.locator("#feed article.roll", has_text="Long shot")
    expect(shot).to_be_visible(timeout=LIVE)
    expect(shot.locator(".die")).to_have_count(2)
    expect(shot.locator(".die.tone-hit")).to_have_count(1)
    expect(shot.locator(".die.tone-hit")).to_have_attribute("title", "6")
