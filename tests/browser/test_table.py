"""A GM and two players at one table, each in their own browser: what each of them sees."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from campaign import services
from campaign.models import Campaign, Character
from rolls.checks import services as roll_services

# One group: with `pytest -n N --dist loadgroup` the three tests share one server and browser.
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

SHEET = {
    "attributes": {"Wits": 3, "Dexterity": 2},
    "skills": {"Occult": 2, "Athletics": 1},
    "specialties": {"Occult": ["Ghosts"]},
}
LIVE = 2_000  # ms: a roll must reach the other pages within this


def cofd_table(accounts: dict[str, Any], **options: Any) -> tuple[Campaign, dict[str, Character]]:
    gm = accounts["gm"]
    campaign = services.create_campaign(
        name="Ashwood", system="cofd", created_by=gm, options=options
    )
    characters = {}
    for player, name in (("alice", "Marianne"), ("boris", "Theo")):
        services.join_campaign(invite_code=campaign.invite_code, user=accounts[player])
        characters[player] = services.create_character(
            campaign=campaign,
            actor=gm,
            name=name,
            traits=SHEET,
            resources={"beats": 0},
            owner_id=accounts[player].pk,
        )
    services.start_session(campaign=campaign, actor=gm, title="Friday")
    services.start_chapter(campaign=campaign, actor=gm, title="The crypt")
    campaign.refresh_from_db()
    return campaign, characters


def live(page: Page) -> None:
    expect(page.locator("#conn")).to_have_attribute("data-state", "live")


def roll(
    page: Page, *traits: str, label: str, visibility: str = "everyone", faces: str = ""
) -> None:
    """Roll from the player page: traits clicked on the sheet, then the form."""
    form = page.locator("#composer")
    chips = form.locator(".trait-chip .chip-x")
    while chips.count():
        chips.first.click()
    for trait in traits:
        page.locator("#sheets button.trait", has_text=trait).click()
    form.get_by_label("What for").fill(label)
    form.locator(".visibility label", has_text=visibility).click()
    if faces:
        form.get_by_label("Faces of your physical dice").fill(faces)
    form.get_by_role("button", name="Roll", exact=True).click()


def item(page: Page, text: str):
    return page.locator("#feed article.roll", has_text=text)


def test_a_roll_reaches_the_table_and_a_blind_roll_stays_with_the_gm(accounts, open_page):
    campaign, _ = cofd_table(accounts)
    gm = open_page("gm", f"/campaigns/{campaign.pk}/gm/")
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    boris = open_page("boris", f"/campaigns/{campaign.pk}/play/")
    for page in (gm, alice, boris):
        live(page)

    # The odds are on the form before anything is rolled (traits picked with the keyboard).
    for trait in ("Wits", "Occult"):
        alice.locator("#sheets button.trait", has_text=trait).focus()
        alice.keyboard.press("Enter")
    odds = alice.locator("#composer-odds .odds")
    expect(odds).to_contain_text("Wits 3")
    expect(odds.locator(".odds-row")).to_have_count(3)  # exceptional success, success, failure
    expect(odds).to_contain_text("= 5 dice")

    roll(alice, "Wits", "Occult", label="Searching the crypt")
    for page in (gm, boris):
        expect(item(page, "Searching the crypt")).to_be_visible(timeout=LIVE)
    expect(item(boris, "Searching the crypt").locator(".dice .die")).not_to_have_count(0)
    # Screen readers hear about it on the other pages too.
    expect(boris.locator("#announcer")).to_contain_text("Marianne")

    # A blind roll: the GM sees it, marked; Boris only ever sees that Alice rolled something.
    roll(alice, "Dexterity", "Athletics", label="The secret sigil", visibility="GM only")
    blind = item(gm, "The secret sigil")
    expect(blind).to_be_visible(timeout=LIVE)
    expect(blind.locator(".tag.vis-blind")).to_be_visible()
    expect(boris.locator("#feed article.stub")).to_contain_text("a hidden roll by alice")
    expect(alice.locator("#feed article.stub")).to_have_count(1)  # the roller: the stub too

    roll(alice, "Wits", label="Reading the tombstone")
    expect(item(boris, "Reading the tombstone")).to_be_visible(timeout=LIVE)
    expect(boris.locator("#feed")).not_to_contain_text("The secret sigil")
    expect(boris.locator("#feed article.stub .dice")).to_have_count(0)

    # The GM reveals it: now everyone sees it.
    blind.get_by_role("button", name="Reveal to everyone").click()
    expect(item(boris, "The secret sigil")).to_be_visible(timeout=LIVE)

    # The GM calls for a check; Boris answers it from his page; the GM sees the roll.
    composer = gm.locator("#composer")
    composer.locator(".pick", has_text="Theo").click()
    gm.locator("#sheets section[aria-label=Theo] button.trait", has_text="Dexterity").click()
    composer.get_by_label("What for").fill("Jump the fence")
    expect(gm.locator("#composer-odds .odds")).to_contain_text("Theo")
    composer.get_by_role("button", name="Call for the check").click()
    call = boris.locator("#calls .call-mine")
    expect(call).to_contain_text("Jump the fence", timeout=LIVE)
    expect(call.locator(".odds")).to_contain_text("Dexterity 2")
    call.get_by_role("button", name="Roll it").click()
    expect(gm.locator("#feed article.roll", has_text="Theo")).to_be_visible(timeout=LIVE)
    expect(call).to_have_count(0)


def test_the_dramatic_failure_button_works_once_per_chapter(accounts, open_page):
    campaign, characters = cofd_table(accounts, manual_dice=True)
    gm = open_page("gm", f"/campaigns/{campaign.pk}/gm/")
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    button = "Fail dramatically for a Beat"
    beats = alice.locator("#sheets section[aria-label=Marianne] .res-beats .res-value")
    expect(beats).to_have_text("0")

    roll(alice, "Wits", "Occult", label="First try", faces="2 3 4 5 6")  # no 8+: a failure
    first = item(alice, "First try")
    expect(first.locator(".badge")).to_have_text("failure")
    result = alice.locator("#composer-result")  # the roll beside the button that made it
    expect(result).to_contain_text("failure")
    first.get_by_role("button", name=button).click()
    expect(first.locator(".badge")).to_have_text("dramatic failure")
    expect(first).to_contain_text("taken on purpose for a Beat")
    expect(result).to_contain_text("dramatic failure")  # it follows its card
    expect(beats).to_have_text("1")
    expect(first.get_by_role("button", name=button)).to_have_count(0)
    allowance = alice.locator("#sheets section[aria-label=Marianne] .rule-flag")
    expect(allowance).to_have_text("dramatic failure for a Beat (this chapter): used")

    roll(alice, "Wits", "Occult", label="Second try", faces="1 2 3 4 5")
    second = item(alice, "Second try")
    expect(second.locator(".badge")).to_have_text("failure")
    expect(second.get_by_role("button", name=button)).to_have_count(0)  # used this chapter

    # A new chapter: the allowance is back.
    gm.locator("#sessionbar").get_by_role("button", name="End the chapter").click()
    gm.get_by_role("dialog").get_by_role("button", name="End the chapter").click()
    # Not "available" while no chapter is open: the rule refuses every roll then.
    expect(allowance).to_have_text(
        "dramatic failure for a Beat (this chapter): no chapter is open", timeout=LIVE
    )
    gm.locator("#sessionbar").get_by_role("button", name="Start a chapter").click()
    expect(alice.locator("#sessionbar")).to_contain_text("Chapter 2", timeout=LIVE)
    expect(allowance).to_have_text("dramatic failure for a Beat (this chapter): available")
    roll(alice, "Wits", "Occult", label="Third try", faces="7 7 6 5 1")
    third = item(alice, "Third try")
    third.get_by_role("button", name=button).click()
    expect(third.locator(".badge")).to_have_text("dramatic failure")
    expect(beats).to_have_text("2")
    assert Character.objects.get(pk=characters["alice"].pk).resources["beats"] == 2


def test_pages_reconnect_after_a_restart_and_show_what_they_missed(accounts, open_page, server):
    campaign, characters = cofd_table(accounts, manual_dice=True)
    gm = open_page("gm", f"/campaigns/{campaign.pk}/gm/")
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    boris = open_page("boris", f"/campaigns/{campaign.pk}/play/")
    pages = (gm, alice, boris)
    for page in pages:
        live(page)

    server.stop()
    for page in pages:
        expect(page.locator("#conn")).to_have_attribute("data-state", "offline")
    # While the server is down, a roll lands in the log (through another server process, say).
    roll_services.check_roll(
        campaign=campaign,
        actor=accounts["alice"],
        request={
            "character": str(characters["alice"].pk),
            "traits": ["Wits"],
            "label": "Rolled while you were away",
            "faces": [9, 9, 3],
        },
    )
    server.start()
    for page in pages:
        expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=15_000)
        expect(item(page, "Rolled while you were away")).to_be_visible()
    # The live feed works again, with no reload.
    roll(alice, "Occult", label="After the restart", faces="8 1")
    for page in (gm, boris):
        expect(item(page, "After the restart")).to_be_visible(timeout=LIVE)
