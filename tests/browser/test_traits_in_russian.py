"""A Russian table reads its traits in Russian wherever a page names one (the sheet, the roll
form's picker and chips, the odds, a feed card, a GM's call), while sheets, rolls and the API keep
a listed trait under its key (its English name). A custom trait is shown as its player wrote it."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from campaign import services
from rolls.models import Check

from .test_table import LIVE, cofd_table, item, live
from .test_table_in_use import through_the_server

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]


def roll_as_picked(page: Page, label: str, faces: str):
    """Roll what the form holds (the test picked it in the page's words); the roll's card."""
    form = page.locator("#composer")
    form.locator("#f-label").fill(label)
    form.locator("#f-faces").fill(faces)
    form.locator("button#composer-roll").click()
    return item(page, label)


def test_a_russian_table_names_its_traits_in_russian(accounts, open_page, server):
    campaign, characters = cofd_table(accounts, manual_dice=True)
    hero = characters["alice"]
    services.change_character(
        campaign=campaign,
        actor=accounts["gm"],
        character=hero,
        traits={
            "attributes": {"Wits": 3},
            "skills": {"Occult": 2},
            "specialties": {"Occult": ["Ghosts"]},
        },
    )
    ru = open_page("alice", f"/campaigns/{campaign.pk}/play/", language="ru")
    en = open_page("boris", f"/campaigns/{campaign.pk}/play/")
    live(ru)
    live(en)
    sheet = ru.locator("#sheets section[aria-label=Marianne]")
    expect(sheet.locator(".trait-name")).to_have_text(["Сообразительность", "Оккультизм"])
    expect(sheet.locator(".trait-extras")).to_have_text("Ghosts")  # as its player wrote it

    sheet.locator("button.trait", has_text="Сообразительность").click()
    ru.locator("#trait-picker").select_option(label="Оккультизм")
    ru.locator("#trait-add").click()
    form = ru.locator("#composer")
    expect(form.locator(".trait-chip")).to_contain_text(["Сообразительность", "Оккультизм"])
    expect(ru.locator("#composer-odds .odds .breakdown")).to_contain_text("Сообразительность 3")

    card = roll_as_picked(ru, "Шёпот", "8 2 3 4 5")
    expect(card.locator(".breakdown")).to_contain_text("Сообразительность 3", timeout=LIVE)
    expect(card.locator(".breakdown")).to_contain_text("Оккультизм 2")
    # The roll keeps the keys; an English page names them so.
    assert Check.objects.get(campaign=campaign).data["rolls"][0]["traits"] == ["Wits", "Occult"]
    english = item(en, "Шёпот").locator(".breakdown")
    expect(english).to_contain_text("Wits 3", timeout=LIVE)

    request = {"traits": ["Wits", "Occult"], "label": ""}
    call = {"characters": [str(hero.pk)], "request": request}
    through_the_server(server, accounts["gm"], campaign, "calls/", call)
    # Its line (the notice's, while its card is out of view; the screen reader's, always).
    expect(ru.locator("#announcer")).to_contain_text("Сообразительность + Оккультизм", timeout=LIVE)


def test_a_russian_expanse_table_names_abilities_and_focuses_in_russian(accounts, open_page):
    """AGE's focuses are listed too: the sheet's tags and the form's focus list name them in
    Russian, and the roll sends the focus's key."""
    gm = accounts["gm"]
    campaign = services.create_campaign(
        name="Rocinante", system="age", created_by=gm, options={"manual_dice": True}
    )
    services.join_campaign(invite_code=campaign.invite_code, user=accounts["alice"])
    services.create_character(
        campaign=campaign,
        actor=gm,
        name="Naomi",
        traits={"abilities": {"Accuracy": 2}, "focuses": {"Accuracy": ["Pistols"]}},
        owner_id=accounts["alice"].pk,
    )
    services.start_session(campaign=campaign, actor=gm, title="Friday")
    ru = open_page("alice", f"/campaigns/{campaign.pk}/play/", language="ru")
    live(ru)
    sheet = ru.locator("#sheets section[aria-label=Naomi]")
    expect(sheet.locator(".trait-name")).to_have_text(["Точность"])
    expect(sheet.locator(".trait-extras")).to_have_text("Пистолеты")
    sheet.locator("button.trait", has_text="Точность").click()
    ru.locator("#f-focus").select_option(label="Пистолеты")
    card = roll_as_picked(ru, "Выстрел", "3 4 5")
    expect(card.locator(".breakdown")).to_contain_text("Точность 2", timeout=LIVE)
    expect(card.locator(".breakdown")).to_contain_text("Пистолеты")
    roll = Check.objects.get(campaign=campaign).data["rolls"][0]
    assert roll["traits"] == ["Accuracy"]
    assert {"kind": "focus", "label": "Pistols"}.items() <= roll["breakdown"][1].items()


def test_a_russian_table_reads_a_resistance_and_the_servers_own_lines_in_russian(
    accounts, open_page, server
):
    """Left English until 2026-12-03: a resistance's line ("Dexterity (Theo)", built from the
    keys) and the Willpower line (labelled "Willpower", not its kind)."""
    campaign, characters = cofd_table(accounts, manual_dice=True)
    marianne, theo = characters["alice"], characters["boris"]
    for character in (marianne, theo):
        services.change_character(
            campaign=campaign, actor=accounts["gm"], character=character, resources={"willpower": 1}
        )
    ru = open_page("alice", f"/campaigns/{campaign.pk}/play/", language="ru")
    en = open_page("boris", f"/campaigns/{campaign.pk}/play/")
    live(ru)
    live(en)
    resistance = {"character": str(theo.pk), "traits": ["Dexterity"], "willpower": True}
    body = {
        "character": str(marianne.pk),
        "traits": ["Wits", "Occult"],
        "willpower": True,
        "resistance": resistance,
        "label": "Взгляд",
        "faces": [8, 2, 3, 4],  # 3 + 2 + 3 for Willpower - 2 - 2 for his = 4 dice
    }
    through_the_server(server, accounts["gm"], campaign, "checks/", body)
    russian = item(ru, "Взгляд").locator(".breakdown")
    expect(russian).to_contain_text("Ловкость (Theo) 2", timeout=LIVE)
    expect(russian).to_contain_text("Сила воли 3")
    expect(russian).to_contain_text("Сила воли на сопротивление 2")
    expect(russian).not_to_contain_text("Dexterity")
    english = item(en, "Взгляд").locator(".breakdown")
    expect(english).to_contain_text("Dexterity (Theo) 2", timeout=LIVE)
    expect(english).to_contain_text("Willpower to resist 2")


LINE_LABELS = """async (lines) => {
  const render = await import("/static/js/render.js");
  return lines.map((line) => render.lineLabel("cofd", line));
}"""


def test_the_pages_name_each_line_as_the_server_does(accounts, open_page):
    """render.js's lineLabel mirrors rolls.words.line_label (the chronicle's and Discord's): the
    same table of lines, the same names, in Russian and in English."""
    from tests.rolls.test_words import LINES

    campaign, _ = cofd_table(accounts)
    lines = [line for line, _, _ in LINES]
    for language, names in (("ru", [r for _, r, _ in LINES]), ("en", [e for _, _, e in LINES])):
        page = open_page("alice", f"/campaigns/{campaign.pk}/play/", language=language)
        live(page)
        assert page.evaluate(LINE_LABELS, lines) == names, language
