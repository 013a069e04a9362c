"""axe-core (the npm package, `make node_modules`, injected into each page) on every page, in
Russian and in English: no critical and no serious violation. Pages are checked as their users
see them, with rolls of each kind in the feed (public, private, blind, a GM's call), the Fortune
form open, and the phone width for the player's page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from campaign import services
from rolls.checks import calls
from rolls.checks import services as roll_services

from .conftest import ROOT
from .test_table import cofd_table, live

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"


def violations(page: Page) -> list[str]:
    """Critical and serious axe violations on the page as it is now, one line each, in the dark
    and in the light theme (the pages follow the system's setting)."""
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run `make node_modules` (npm ci)", pytrace=False)
    # Through the DevTools protocol: the pages' CSP refuses inline scripts (as it should).
    page.evaluate(Path(AXE).read_text())
    found = []
    for scheme in ("dark", "light"):
        # Reduced motion also stops the colour transitions, so axe sees the settled colours.
        page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
        found += [f"{scheme}: {line}" for line in axe(page)]
    return [f"{page.url} [{page.viewport_size['width']}px] {line}" for line in found]


def axe(page: Page) -> list[str]:
    return page.evaluate(
        """async () => {
          const result = await axe.run(document, { resultTypes: ["violations"] });
          return result.violations
            .filter((v) => v.impact === "critical" || v.impact === "serious")
            .map((v) => `${v.impact} ${v.id}: ${v.nodes.length} nodes, e.g. ${v.nodes[0].target}`
                        + ` — ${v.nodes[0].failureSummary.split("\\n").slice(1, 2).join("")}`);
        }"""
    )


def a_table_with_every_kind_of_roll(accounts: dict[str, Any]) -> Any:
    campaign, characters = cofd_table(accounts)
    gm, alice, boris = accounts["gm"], accounts["alice"], accounts["boris"]
    for actor, character, visibility in (
        (alice, characters["alice"], "public"),
        (boris, characters["boris"], "private"),
        (alice, characters["alice"], "blind"),
    ):
        roll_services.check_roll(
            campaign=campaign,
            actor=actor,
            request={
                "character": character.id,
                "traits": ["Wits", "Occult"],
                "visibility": visibility,
                "label": f"a {visibility} roll",
            },
        )
    roll_services.check_roll(
        campaign=campaign, actor=gm, request={"pool": 4, "label": "the watchman listens"}
    )
    calls.call_for_check(
        campaign=campaign,
        actor=gm,
        character_ids=[str(characters["alice"].id)],
        request={"traits": ["Dexterity", "Athletics"], "label": "run"},
    )
    return campaign


def test_no_critical_or_serious_violation_on_any_page(accounts, open_page, browser, server):
    campaign = a_table_with_every_kind_of_roll(accounts)
    age = services.create_campaign(name="Tycho", system="age", created_by=accounts["gm"])
    services.join_campaign(invite_code=age.invite_code, user=accounts["alice"])
    naomi = services.create_character(
        campaign=age,
        actor=accounts["gm"],
        name="Naomi",
        traits={"abilities": {"Perception": 2}, "focuses": {}},
        resources={"fortune": 10},
        owner_id=accounts["alice"].pk,
    )
    services.start_session(campaign=age, actor=accounts["gm"], title="Friday")
    roll_services.check_roll(
        campaign=age,
        actor=accounts["alice"],
        request={"character": naomi.id, "traits": ["Perception"]},
    )
    found: list[str] = []
    for language in ("en", "ru"):
        # Signed out: the sign-in and sign-up pages.
        context = browser.new_context(locale=language, base_url=server.url)
        page = context.new_page()
        page.set_extra_http_headers({"Accept-Language": language})
        for path in ("/accounts/login/", "/accounts/signup/"):
            page.goto(path)
            found += violations(page)
        context.close()

        gm = open_page("gm", "/", language)
        found += violations(gm)  # the campaign list
        gm.goto(f"/campaigns/{campaign.pk}/gm/")
        live(gm)
        gm.locator("#setup summary").click()
        found += violations(gm)
        gm.goto("/audit/")
        found += violations(gm)
        gm.goto("/no-such-page/")
        found += violations(gm)

        alice = open_page("alice", f"/campaigns/{campaign.pk}/play/", language)
        live(alice)
        alice.locator("#sheets button.trait").first.click()
        alice.wait_for_selector("#composer-odds figure")
        found += violations(alice)
        alice.locator("#composer-roll").click()
        alice.wait_for_selector("#composer-result .last-roll")
        found += violations(alice)
        alice.set_viewport_size({"width": 390, "height": 844})
        found += violations(alice)
        alice.goto(f"/campaigns/{age.pk}/play/")
        live(alice)
        alice.locator("#feed details.fortune summary").first.click()
        found += violations(alice)
        alice.goto(f"/campaigns/{campaign.pk}/audit/")
        found += violations(alice)
    assert not found, "axe-core found critical or serious violations:\n" + "\n".join(found)
