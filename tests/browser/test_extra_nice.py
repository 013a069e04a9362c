"""Nice!/Damnit!: the extra Nice! buttons say what taking them gives, from the server's offer
(each extra Nice! comes with a Damnit!: the offer's `gain`), in the page's language."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from campaign import services

from .test_table import live
from .test_table_in_use import through_the_server

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]
LIVE = 2_000


def test_the_extra_nice_buttons_say_the_damnit_that_comes_with_them(accounts, open_page, server):
    gm = accounts["gm"]
    campaign = services.create_campaign(
        name="Dust", system="nice_damnit", created_by=gm, options={"manual_dice": True}
    )
    services.join_campaign(invite_code=campaign.invite_code, user=accounts["alice"])
    ada = services.create_character(
        campaign=campaign,
        actor=gm,
        name="Ada",
        traits={"areas": {"Firearms": 2}, "skills": {}},
        owner_id=accounts["alice"].pk,
    )
    services.start_session(campaign=campaign, actor=gm, title="Friday")
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    ru = open_page("alice", f"/campaigns/{campaign.pk}/play/", language="ru")
    live(alice)
    live(ru)
    check = through_the_server(
        server,
        accounts["alice"],
        campaign,
        "checks/",
        {"character": str(ada.pk), "traits": ["Firearms"], "faces": [6, 7], "label": "Draw"},
    )
    offer = next(o for o in check["follow_ups"] if o["kind"] == "extra_nice")
    assert [c["gain"] for c in offer["choices"]] == [
        {"nice": 1, "damnit": 1},
        {"nice": 2, "damnit": 2},
    ]
    card = alice.locator(f"#roll-{check['seq']}")
    expect(card.locator(".btn-nice")).to_have_text(
        ["Take 1 extra Nice! (+1 Damnit!)", "Take 2 extra Nice! (+2 Damnit!)"], timeout=LIVE
    )
    expect(ru.locator(f"#roll-{check['seq']} .btn-nice").first).to_have_text(
        "Добрать 1 Nice! (+1 Damnit!)", timeout=LIVE
    )
    card.locator(".btn-nice").first.click()
    expect(card.locator(".btn-nice")).to_have_count(0)
    expect(card).to_contain_text("1 extra Nice! taken")
