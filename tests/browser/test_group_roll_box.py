"""The GM's one-line roll box for a group: several characters ticked, the line typed once; the
box previews the odds for each, and Call for the check and Roll it now use what it read (the
fields below step aside while it holds a line, so nothing on the form disagrees with it)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from rolls.models import Check, CheckCall

from .test_table import cofd_table, live

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]
LIVE = 2_000


def test_a_group_check_typed_once_is_previewed_called_and_rolled(accounts, open_page):
    campaign, characters = cofd_table(accounts)
    gm = open_page("gm", f"/campaigns/{campaign.pk}/gm/")
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(gm)
    live(alice)
    composer = gm.locator("#composer")
    for name in ("Marianne", "Theo"):
        composer.locator(".pick", has_text=name).click()
    box = gm.locator("#rollbox")
    box.fill("Wits + Occult 9again")
    preview = gm.locator("#rollbox-preview figure.odds")
    expect(preview).to_have_count(2)
    expect(preview.nth(0)).to_contain_text("Odds for Marianne")
    expect(preview.nth(1)).to_contain_text("Odds for Theo")
    expect(preview.nth(1).locator(".breakdown")).to_contain_text("9-again")
    expect(gm.locator("#rollbox-error")).to_be_hidden()
    # The line is the check: the fields that would say another step aside, and say so.
    expect(gm.locator("#composer-fields")).to_be_hidden()
    expect(gm.locator("#composer-odds")).to_be_hidden()
    expect(gm.locator("#composer-fields-note")).to_be_visible()

    composer.get_by_label("What for").fill("Read the sigils")
    composer.get_by_role("button", name="Call for the check").click()
    expect(alice.locator("#calls .call-mine")).to_contain_text("Read the sigils", timeout=LIVE)
    expect(composer.locator("#composer-error")).to_be_hidden()
    call = CheckCall.objects.get(campaign=campaign)
    assert call.request == {
        "traits": ["Wits", "Occult"],
        "again": 9,
        "visibility": "public",
        "label": "Read the sigils",
    }
    assert sorted(call.character_ids) == sorted(str(c.pk) for c in characters.values())

    # Roll it now (and Enter in the box): one roll for each ticked character, the line's check.
    composer.get_by_role("button", name="Roll it now").click()
    result = composer.locator("#composer-result .last-roll")
    expect(result).to_have_count(2, timeout=LIVE)
    box.press("Enter")
    expect(gm.locator("#feed article.roll", has_text="Read the sigils")).to_have_count(4)
    checks = Check.objects.filter(campaign=campaign).order_by("seq")
    assert [c.data["request"]["again"] for c in checks] == [9, 9, 9, 9]
    assert {c.data["rolls"][0]["character_name"] for c in checks} == {"Marianne", "Theo"}

    # Unticking one reads the line again for who is left; clearing it brings the fields back.
    composer.locator(".pick", has_text="Theo").click()
    expect(preview).to_have_count(1)
    expect(preview).to_contain_text("Odds for Marianne")
    composer.get_by_role("button", name="Use the fields instead").click()
    expect(box).to_have_value("")
    expect(gm.locator("#composer-fields")).to_be_visible()
    expect(gm.locator("#composer-fields-note")).to_be_hidden()


def test_a_refused_line_is_not_called_from_the_fields_behind_it(accounts, open_page):
    campaign, _ = cofd_table(accounts)
    gm = open_page("gm", f"/campaigns/{campaign.pk}/gm/")
    live(gm)
    composer = gm.locator("#composer")
    for name in ("Marianne", "Theo"):
        composer.locator(".pick", has_text=name).click()
    gm.locator("#sheets section[aria-label=Theo] button.trait", has_text="Wits").click()
    gm.locator("#rollbox").fill("Wits + Ocult")
    expect(gm.locator("#rollbox-error")).to_contain_text("Ocult")
    composer.get_by_role("button", name="Call for the check").click()
    expect(composer.locator("#composer-error")).to_contain_text("The typed line is not a check")
    assert not CheckCall.objects.filter(campaign=campaign).exists()
