"""A long Friday session in three browsers: the feed changes one card at a time, nothing a user
is choosing is reset by someone else's roll, the roll form survives a reload, the keyboard stays
on the form, and a phone shows the roller their result."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect
from rest_framework.authtoken.models import Token

from campaign import services
from campaign.models import Campaign
from rolls.checks import calls
from rolls.checks import services as roll_services

from .test_table import cofd_table, live

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

AGE_SHEET = {"abilities": {"Perception": 2, "Dexterity": 1}, "focuses": {}}


def mark_cards(page: Page) -> int:
    """Tag every card node now in the feed; returns how many there are."""
    return page.evaluate(
        """() => {
          const cards = [...document.querySelectorAll('#feed [data-seq]')];
          cards.forEach((node) => (node.__before = true));
          return cards.length;
        }"""
    )


def unmarked_old_cards(page: Page, seqs: list[int]) -> list[int]:
    """The given seqs whose card node is no longer the one tagged by mark_cards."""
    return page.evaluate(
        """(seqs) => seqs.filter((seq) => {
          const node = document.querySelector(`#feed [data-seq="${seq}"]`);
          return !node || !node.__before;
        })""",
        seqs,
    )


def roll_as(campaign: Any, user: Any, character: Any, traits: list[str], label: str) -> int:
    """Before the pages open: straight through the service."""
    check = roll_services.check_roll(
        campaign=campaign,
        actor=user,
        request={"character": character.id, "traits": traits, "label": label},
    )
    return check.seq


def roll_live(server: Any, campaign: Any, user: Any, character: Any, traits: list[str]) -> int:
    """While the pages are open: through the server, as another player's client would."""
    token, _ = Token.objects.get_or_create(user=user)
    response = httpx.post(
        f"{server.url}/api/campaigns/{campaign.pk}/checks/",
        json={"character": str(character.id), "traits": traits, "label": "meanwhile"},
        headers={"Authorization": f"Token {token.key}"},
        timeout=10,
    )
    assert response.status_code == 201, response.text
    return response.json()["seq"]


def test_a_new_roll_adds_one_card_and_replaces_none(accounts, open_page, server):
    campaign, characters = cofd_table(accounts)
    seqs = [
        roll_as(campaign, accounts["boris"], characters["boris"], ["Wits", "Occult"], f"r{n}")
        for n in range(6)
    ]
    gm = open_page("gm", f"/campaigns/{campaign.pk}/gm/")
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    for page in (gm, alice):
        live(page)
        expect(page.locator("#feed article.roll")).to_have_count(6)
        mark_cards(page)

    new = roll_live(server, campaign, accounts["boris"], characters["boris"], ["Wits"])
    for page in (gm, alice):
        expect(page.locator(f"#feed article[data-seq='{new}']")).to_be_visible()
        assert unmarked_old_cards(page, seqs) == []
        # Only the new card moves; the others stay still.
        assert page.locator("#feed article.is-new").count() == 1


def test_an_open_fortune_form_keeps_its_choice_when_another_player_rolls(
    accounts, open_page, server
):
    gm_user = accounts["gm"]
    campaign = services.create_campaign(name="Tycho", system="age", created_by=gm_user)
    characters = {}
    for player, name in (("alice", "Naomi"), ("boris", "Amos")):
        services.join_campaign(invite_code=campaign.invite_code, user=accounts[player])
        characters[player] = services.create_character(
            campaign=campaign,
            actor=gm_user,
            name=name,
            traits=AGE_SHEET,
            resources={"fortune": 20},
            owner_id=accounts[player].pk,
        )
    services.start_session(campaign=campaign, actor=gm_user, title="Friday")
    seq = roll_as(campaign, accounts["alice"], characters["alice"], ["Perception"], "scan")

    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    card = alice.locator(f"#feed article[data-seq='{seq}']")
    card.locator("summary", has_text="Spend Fortune").click()
    card.get_by_label("Die", exact=True).select_option("1")
    card.get_by_label("New face").select_option("3")

    other = roll_live(server, campaign, accounts["boris"], characters["boris"], ["Dexterity"])
    expect(alice.locator(f"#feed article[data-seq='{other}']")).to_be_visible()
    alice.wait_for_timeout(400)  # the state refresh after the roll lands too
    expect(card.locator("details.fortune")).to_have_attribute("open", "")
    expect(card.get_by_label("Die", exact=True)).to_have_value("1")
    expect(card.get_by_label("New face")).to_have_value("3")


def test_the_roll_form_survives_a_reload(accounts, open_page):
    campaign, _ = cofd_table(accounts)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    form = alice.locator("#composer")
    alice.locator("#sheets button.trait", has_text="Wits").click()
    alice.locator("#sheets button.trait", has_text="Occult").click()
    form.get_by_label("Explosions").select_option("8")
    form.get_by_label("What for").fill("read the sigil")
    form.locator(".visibility label", has_text="roller and GM").click()
    form.get_by_label("Rote action").check()

    alice.reload()
    live(alice)
    expect(form.locator(".trait-chip")).to_have_count(2)
    expect(form.locator(".trait-chip").first).to_contain_text("Wits")
    expect(form.get_by_label("Explosions")).to_have_value("8")
    expect(form.get_by_label("What for")).to_have_value("read the sigil")
    expect(form.locator("input[name=visibility][value=private]")).to_be_checked()
    expect(form.get_by_label("Rote action")).to_be_checked()
    expect(form.locator("#composer-odds figure.odds")).to_be_visible()


def test_the_keyboard_stays_on_the_form(accounts, open_page):
    campaign, _ = cofd_table(accounts)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    form = alice.locator("#composer")

    # "/" from the page goes to the form: its one-line roll box.
    alice.locator("body").click(position={"x": 5, "y": 300})
    alice.keyboard.press("/")
    expect(alice.locator("#rollbox")).to_be_focused()
    alice.locator("#trait-picker").focus()

    # Arrow keys walk the trait list without adding; Enter adds.
    alice.keyboard.press("ArrowDown")
    alice.keyboard.press("ArrowDown")
    expect(form.locator(".trait-chip")).to_have_count(0)
    alice.keyboard.press("Enter")
    expect(form.locator(".trait-chip")).to_have_count(1)

    roll_button = form.get_by_role("button", name="Roll", exact=True)
    roll_button.focus()
    alice.keyboard.press("Enter")
    expect(alice.locator("#composer-result .last-roll")).to_be_visible()
    expect(roll_button).to_be_focused()
    # Rolling again is one keystroke.
    alice.keyboard.press("Enter")
    expect(alice.locator("#feed article.roll")).to_have_count(2)
    expect(roll_button).to_be_focused()


def test_a_phone_shows_the_sheet_and_form_first_and_the_result_after_roll(accounts, open_page):
    campaign, characters = cofd_table(accounts)
    for n in range(12):
        roll_as(campaign, accounts["boris"], characters["boris"], ["Wits"], f"earlier {n}")
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    alice.set_viewport_size({"width": 390, "height": 844})
    live(alice)
    sheet_top = alice.locator("#sheets").bounding_box()["y"]
    form_top = alice.locator("#composer").bounding_box()["y"]
    feed_top = alice.locator("#feed").bounding_box()["y"]
    assert form_top < feed_top and sheet_top < feed_top
    assert alice.evaluate("document.documentElement.scrollWidth") <= 390

    alice.locator("#sheets button.trait", has_text="Wits").click()
    alice.locator("#composer").get_by_role("button", name="Roll", exact=True).click()
    result = alice.locator("#composer-result .last-roll")
    expect(result).to_be_in_viewport()
    assert alice.evaluate("document.documentElement.scrollWidth") <= 390


def test_ending_the_session_asks_about_the_open_chapter(accounts, open_page):
    campaign, _ = cofd_table(accounts)
    gm = open_page("gm", f"/campaigns/{campaign.pk}/gm/")
    live(gm)
    bar = gm.locator("#sessionbar")
    bar.get_by_role("button", name="End the session").click()
    question = gm.get_by_role("dialog")
    expect(question).to_contain_text("Chapter 1 is still open")
    question.get_by_role("button", name="Cancel").click()
    expect(bar.get_by_role("button", name="End the session")).to_be_focused()

    bar.get_by_role("button", name="End the session").click()
    question.get_by_role("button", name="End the session and the chapter").click()
    expect(bar.get_by_role("button", name="Start a session")).to_be_visible()
    expect(bar.get_by_role("button", name="Start a chapter")).to_be_visible()


# The shape of the server's sheet template (docs: the sheet template), trimmed to a few traits.
COFD_TEMPLATE = {
    "system": "cofd",
    "groups": [
        {
            "key": "attributes",
            "label": "Attributes",
            "kind": "dots",
            "min": 1,
            "max": 10,
            "dots": 5,
            "default": 1,
            "rollable": True,
            "open": False,
            "of": None,
            "sections": [{"key": "mental", "label": "Mental"}],
            "traits": [
                {"key": "Wits", "label": "Wits", "section": "mental", "aliases": []},
                {"key": "Resolve", "label": "Resolve", "section": "mental", "aliases": []},
            ],
        },
        {
            "key": "skills",
            "label": "Skills",
            "kind": "dots",
            "min": 0,
            "max": 10,
            "dots": 5,
            "default": 0,
            "rollable": True,
            "open": False,
            "of": None,
            "sections": [],
            "traits": [
                {"key": "Occult", "label": "Occult", "aliases": []},
                {"key": "Brawl", "label": "Brawl", "aliases": []},
            ],
        },
        {
            "key": "specialties",
            "label": "Specialties",
            "kind": "chips",
            "rollable": False,
            "open": True,
            "of": "skills",
            "sections": [],
            "traits": [],
        },
    ],
    "resources": [
        {
            "key": "willpower",
            "label": "Willpower",
            "min": 0,
            "max": 10,
            "default": 0,
            "start_max": 10,
        }
    ],
    "rank_values": None,
}


def test_the_sheet_editor_built_from_the_template(accounts, open_page):
    campaign, _ = cofd_table(accounts)
    gm = open_page("gm", "/")

    def with_template(route: Any) -> None:
        html = route.fetch().text()
        script = (
            '<script id="sheet-template" type="application/json">'
            + json.dumps(COFD_TEMPLATE)
            + "</script>"
        )
        route.fulfill(body=html.replace("</body>", script + "</body>"), content_type="text/html")

    gm.route(f"**/campaigns/{campaign.pk}/gm/", with_template)
    gm.goto(f"/campaigns/{campaign.pk}/gm/")
    live(gm)
    gm.locator("#sheets .sheet", has_text="Theo").get_by_role("button", name="Edit").click()
    editor = gm.locator("form.sheet-editor")
    expect(editor.get_by_label("Wits")).to_have_value("3")
    expect(editor.get_by_label("Brawl")).to_have_value("")  # not on the sheet yet: counts as 0
    editor.get_by_label("Brawl").fill("2")
    expect(editor.locator(".se-trait", has_text="Brawl").locator(".dots-preview")).to_have_text(
        "●●○○○"
    )
    editor.get_by_label("Specialties").fill("Boxing")
    editor.locator(".se-chips-group").get_by_role("combobox").select_option("Brawl")
    editor.locator(".se-chips-group").get_by_role("button", name="Add").click()
    expect(editor.locator(".chip-edit")).to_contain_text(["Brawl: Boxing"])
    editor.get_by_role("button", name="Save").click()
    expect(editor).to_have_count(0)
    sheet = gm.locator("#sheets .sheet", has_text="Theo")
    expect(sheet.locator("button.trait", has_text="Brawl")).to_be_visible()
    expect(sheet).to_contain_text("Boxing")


def test_saving_a_sheet_keeps_the_willpower_a_roll_spent_while_it_was_open(
    accounts, open_page, server
):
    """The GM opens Theo's sheet, Theo's player spends Willpower on a roll, the GM gives a Beat
    and saves: the form sends only the Beats it changed, so the spend stands (it sent every
    resource as it had shown them, and set the Willpower back)."""
    campaign, characters = cofd_table(accounts)
    theo = characters["boris"]
    services.change_character(
        campaign=campaign, actor=accounts["gm"], character=theo, resources={"willpower": 5}
    )
    gm = open_page("gm", f"/campaigns/{campaign.pk}/gm/")
    live(gm)
    gm.locator("#sheets .sheet", has_text="Theo").get_by_role("button", name="Edit").click()
    editor = gm.locator("form.sheet-editor")
    willpower = editor.locator('[data-path="resources.willpower"]')
    expect(willpower).to_have_value("5")

    token, _ = Token.objects.get_or_create(user=accounts["boris"])
    spent = httpx.post(
        f"{server.url}/api/campaigns/{campaign.pk}/checks/",
        json={"character": str(theo.id), "traits": ["Wits"], "willpower": True},
        headers={"Authorization": f"Token {token.key}"},
        timeout=10,
    )
    assert spent.status_code == 201, spent.text
    expect(willpower).to_have_value("5")  # the open form is not rebuilt under the GM's hands

    editor.locator('[data-path="resources.beats"]').fill("2")
    editor.get_by_role("button", name="Save").click()
    expect(editor).to_have_count(0)
    theo.refresh_from_db()
    assert theo.resources == {"willpower": 4, "beats": 2}


def test_the_feed_holds_a_window_and_shows_older_rolls_on_demand(accounts, open_page):
    campaign, characters = cofd_table(accounts)
    for n in range(56):
        roll_as(campaign, accounts["boris"], characters["boris"], ["Wits"], f"roll {n}")
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    cards = alice.locator("#feed article.roll")
    expect(cards).to_have_count(50)
    expect(cards.first).to_contain_text("roll 55")
    alice.get_by_role("button", name="Show older rolls").click()
    expect(cards).to_have_count(56)
    expect(cards.last).to_contain_text("roll 0")
    expect(alice.get_by_role("button", name="Show older rolls")).to_have_count(0)


def test_no_page_is_wider_than_a_phone(accounts, open_page):
    campaign, characters = cofd_table(accounts)
    roll_as(campaign, accounts["alice"], characters["alice"], ["Wits", "Occult"], "a long label")
    for who, path in (
        ("gm", f"/campaigns/{campaign.pk}/gm/"),
        ("alice", f"/campaigns/{campaign.pk}/play/"),
        ("alice", f"/campaigns/{campaign.pk}/audit/"),
        ("alice", "/"),
    ):
        page = open_page(who, path)
        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_timeout(300)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{path} is {width}px wide on a 390px phone"


def test_the_top_bar_is_one_line_on_a_laptop(accounts, open_page):
    """From 1280 to 1440 px the top bar (the campaign's name, its tabs, the connection, the
    language and the account) is one line, in both languages: the GM's, in Russian, took two
    below 1420 px, and the dashboard's sticky columns slid under it."""
    campaign, _ = cofd_table(accounts)
    Campaign.objects.filter(pk=campaign.pk).update(name="Невинные из Эшвуда: склеп под часовней")
    for language in ("ru", "en"):
        for who, path in (
            ("gm", f"/campaigns/{campaign.pk}/gm/"),
            ("alice", f"/campaigns/{campaign.pk}/play/"),
        ):
            page = open_page(who, path, language)
            live(page)
            for width in (1280, 1366, 1440):
                page.set_viewport_size({"width": width, "height": 800})
                page.wait_for_timeout(150)
                middles = page.locator(
                    ".topbar .brand, .topbar .campaign-title, .topbar .tabs li, .topbar-end > *"
                ).evaluate_all(
                    """(items) => items.filter((item) => item.offsetParent).map((item) => {
                      const box = item.getBoundingClientRect();
                      return Math.round(box.top + box.height / 2);
                    })"""
                )
                assert len(middles) > 8, middles
                assert max(middles) - min(middles) < 10, f"{language} {path} {width}px: {middles}"
                bar = page.locator(".topbar").evaluate("(bar) => bar.offsetHeight")
                assert bar < 60, f"{language} {path} {width}px: the bar is {bar}px high"
                # Beside the tabs the die stands for the app's name, and still says it.
                expect(page.locator(".brand span")).to_be_hidden()
                expect(page.get_by_role("link", name="Tablecheck")).to_be_visible()
    home = open_page("gm", "/")  # no tabs: the name has room
    expect(home.locator(".brand span")).to_be_visible()


def test_the_roll_forms_labels_fit_their_fields_and_a_box_stays_by_its_words(accounts, open_page):
    """The CofD roll form in Russian, on a desktop and a phone: no field's label runs past its
    field into the next one («Сопротивление» did), and a Willpower box sits on the first line
    of its words (they wrapped to a line of their own below it)."""
    campaign, _ = cofd_table(accounts, manual_dice=True)
    page = open_page("alice", f"/campaigns/{campaign.pk}/play/", "ru")
    live(page)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(200)
        spilled = page.locator("#composer .field > label").evaluate_all(
            "(labels) => labels.filter((l) => l.offsetParent && l.scrollWidth > l.clientWidth)"
            ".map((l) => l.textContent)"
        )
        assert spilled == [], f"{width}px: {spilled}"
        apart = page.locator("#composer .check.willpower").evaluate_all(
            """(checks) => checks.map((check) => {
              const box = check.querySelector('input').getBoundingClientRect();
              const words = check.querySelector('span');  // a block: its first line's middle
              const line = parseFloat(getComputedStyle(words).lineHeight);
              const top = words.getBoundingClientRect().top;
              return Math.abs(box.top + box.height / 2 - (top + line / 2));
            })"""
        )
        assert apart and max(apart) < 8, f"{width}px: {apart}"


def test_the_audit_history_reads_on_a_phone(accounts, open_page):
    """On a phone a history row is a card: nothing in it runs past the table's scroll box (the
    time and the dice were cut off, a row to scroll sideways), and the numbers whose column
    header is hidden say what they are."""
    campaign, characters = cofd_table(accounts, manual_dice=True)
    request = {
        "character": characters["alice"].id,
        "traits": ["Wits", "Occult"],
        "label": "Read the ancient inscription on the altar",
        "faces": [10, 10, 10, 8, 9, 10, 10, 7, 3, 4],  # explosions: long chains of dice
    }
    roll_services.check_roll(campaign=campaign, actor=accounts["alice"], request=request)
    page = open_page("alice", f"/campaigns/{campaign.pk}/audit/", "ru")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(300)
    box = page.locator(".table-scroll")
    assert box.evaluate("(el) => el.scrollWidth <= el.clientWidth"), "a row runs past the box"
    labels = page.locator(".audit-table tbody tr").first.locator("td[data-label]")
    said = labels.evaluate_all(
        "(cells) => cells.map((cell) => getComputedStyle(cell, '::before').content)"
    )
    assert said[:2] == ['"Сессия "', '"Глава "'], said


def feed_items(page: Page) -> list[str]:
    """What the feed shows, newest first: each card's or marker's seq and text."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#feed [data-seq]')].map(
          (node) => `${node.dataset.seq} ${node.className.split(' ')[0]}`)"""
    )


def test_a_reloaded_feed_shows_the_markers_a_page_that_stayed_open_shows(
    accounts, open_page, server
):
    campaign, characters = cofd_table(accounts)  # session 1 and chapter 1 started: two markers
    calls.call_for_check(
        campaign=campaign,
        actor=accounts["gm"],
        character_ids=[str(characters["alice"].id)],
        request={"traits": ["Wits"], "label": "look around"},
    )
    stayed = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(stayed)
    for _ in range(2):
        roll_live(server, campaign, accounts["boris"], characters["boris"], ["Wits"])
    expect(stayed.locator("#feed article.roll")).to_have_count(2)
    reloaded = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(reloaded)
    markers = reloaded.locator("#feed .marker")
    expect(markers).to_have_count(3)  # all older than the first roll, none left out
    expect(markers.filter(has_text="Session 1 started")).to_have_count(1)
    expect(markers.filter(has_text="The GM calls for a check")).to_have_count(1)
    assert feed_items(reloaded) == feed_items(stayed)
    expect(reloaded.get_by_role("button", name="Show older rolls")).to_have_count(0)


def test_markers_older_than_the_window_come_with_the_older_rolls(accounts, open_page):
    campaign, characters = cofd_table(accounts)
    for n in range(51):  # one more than the window
        roll_as(campaign, accounts["boris"], characters["boris"], ["Wits"], f"roll {n}")
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    expect(alice.locator("#feed article.roll")).to_have_count(50)
    expect(alice.locator("#feed .marker")).to_have_count(0)  # older than every roll shown
    alice.get_by_role("button", name="Show older rolls").click()
    expect(alice.locator("#feed article.roll")).to_have_count(51)
    expect(alice.locator("#feed .marker")).to_have_count(2)
    expect(alice.locator("#feed [data-seq]").last).to_contain_text("Session 1 started")
