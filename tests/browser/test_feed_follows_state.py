"""The controls around the feed follow the server's state live: «Roll again» only while a
session is open, the roll form's Willpower count and odds after what changes them, and the
result area's messages (a lost connection, a blind roll)."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from django.db import connection, transaction
from django.db.models import F
from playwright.sync_api import expect
from rest_framework.authtoken.models import Token

from campaign import services
from campaign.models import Campaign
from rolls.models import Check

from .test_table import LIVE, cofd_table, item, live, roll
from .test_table_in_use import through_the_server

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]


def gm_writes(server, gm, campaign, method: str, path: str, body: dict) -> None:
    """The GM's write from another client of the table (the server publishes it live)."""
    token, _ = Token.objects.get_or_create(user=gm)
    response = httpx.request(
        method,
        f"{server.url}/api/campaigns/{campaign.pk}/{path}",
        json=body,
        headers={"Authorization": f"Token {token.key}"},
        timeout=10,
    )
    assert response.status_code < 300, response.text


def test_roll_again_is_offered_only_while_a_session_is_open(accounts, open_page, server):
    """«Roll again» while a session is open; a failure's dramatic failure for a Beat while its
    own session is (RULES 3.5: the roll's moment), not again in the next one."""
    campaign, _ = cofd_table(accounts, manual_dice=True)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    roll(alice, "Wits", label="Read the stones", faces="8 2 3")
    again = item(alice, "Read the stones").get_by_role("button", name="Roll again")
    expect(again).to_be_visible()
    roll(alice, "Wits", label="Pick the lock", faces="2 3 4")  # a failure
    fail = item(alice, "Pick the lock").get_by_role("button", name="Fail dramatically for a Beat")
    expect(fail).to_be_visible()

    through_the_server(server, accounts["gm"], campaign, "sessions/end/", {})
    expect(alice.locator("#sessionbar")).to_contain_text("The GM starts a session", timeout=LIVE)
    expect(again).to_have_count(0, timeout=LIVE)
    expect(fail).to_have_count(0, timeout=LIVE)
    alice.reload()
    live(alice)
    expect(item(alice, "Read the stones")).to_be_visible()
    expect(again).to_have_count(0)
    expect(fail).to_have_count(0)

    through_the_server(server, accounts["gm"], campaign, "sessions/", {"title": "Saturday"})
    expect(again).to_be_visible(timeout=LIVE)
    expect(fail).to_have_count(0)


def test_the_forms_willpower_and_odds_follow_spends_edits_and_resets(accounts, open_page, server):
    campaign, characters = cofd_table(accounts, manual_dice=True)
    hero = characters["alice"]
    services.change_character(
        campaign=campaign, actor=accounts["gm"], character=hero, resources={"willpower": 4}
    )
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    form = alice.locator("#composer")
    for trait in ("Wits", "Occult"):
        alice.locator("#sheets button.trait", has_text=trait).click()
    balance = form.locator("#willpower-balance")
    odds = alice.locator("#composer-odds .odds .breakdown")
    spend = form.get_by_label("Spend 1 Willpower")
    expect(balance).to_have_text("· 4 left")
    expect(odds).to_contain_text("= 5 dice")
    spend.check()
    expect(odds).to_contain_text("= 8 dice")

    # A roll spends it: the count follows the sheet, the odds the cleared box.
    form.get_by_label("What for").fill("Hold on")
    form.get_by_label("Faces of your physical dice").fill("8 2 3 4 5 6 7 1")
    form.get_by_role("button", name="Roll", exact=True).click()
    expect(item(alice, "Hold on")).to_be_visible()
    sheet = alice.locator("#sheets section[aria-label=Marianne] .res-willpower .res-value")
    expect(sheet).to_have_text("3", timeout=LIVE)
    expect(spend).not_to_be_checked()
    expect(balance).to_have_text("· 3 left", timeout=LIVE)
    expect(odds).to_contain_text("= 5 dice", timeout=LIVE)

    # The GM edits it: the form follows, no field touched.
    path = f"characters/{hero.id}/"
    gm_writes(server, accounts["gm"], campaign, "PATCH", path, {"resources": {"willpower": 1}})
    expect(balance).to_have_text("· 1 left", timeout=LIVE)

    # A failed attempt at a task, then the GM resets it: the odds drop the attempt.
    form.get_by_label("Task").fill("the lock")
    form.get_by_label("What for").fill("Pick the lock")
    form.get_by_label("Faces of your physical dice").fill("1 2 3 4 5")
    form.get_by_role("button", name="Roll", exact=True).click()
    expect(item(alice, "Pick the lock")).to_be_visible()
    expect(odds).to_contain_text("attempt 2", timeout=LIVE)
    body = {"character": str(hero.id), "task": "the lock"}
    gm_writes(server, accounts["gm"], campaign, "POST", "tasks/reset/", body)
    expect(odds).not_to_contain_text("attempt 2", timeout=LIVE)


def test_the_page_says_at_once_when_its_network_went_and_catches_up_when_it_is_back(
    accounts, open_page, server
):
    """The browser's own network goes (a phone's wifi drops): the indicator says so at once,
    not once a keep-alive times out a minute later (the socket's close event may wait for the
    network); back online, the page reconnects and shows what was rolled meanwhile."""
    campaign, characters = cofd_table(accounts, manual_dice=True)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    alice.context.set_offline(True)
    expect(alice.locator("#conn")).to_have_attribute("data-state", "offline", timeout=3_000)
    body = {"character": str(characters["boris"].pk), "traits": ["Wits"], "faces": [8, 2, 3]}
    gm_writes(server, accounts["gm"], campaign, "POST", "checks/", {**body, "label": "Meanwhile"})
    alice.context.set_offline(False)
    expect(alice.locator("#conn")).to_have_attribute("data-state", "live", timeout=LIVE)
    expect(item(alice, "Meanwhile")).to_be_visible(timeout=LIVE)


def test_a_typed_line_read_without_a_connection_is_not_called_wrong(accounts, open_page):
    """Offline, the roll box cannot have its line read: it says there is no connection without
    marking the line invalid, and Roll says nothing was done (it said to fix the line); back
    online, the same line rolls."""
    campaign, _ = cofd_table(accounts)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    alice.clock.install()
    alice.reload()
    live(alice)
    box = alice.locator("#rollbox")
    box.fill("Wits + Occult")
    expect(alice.locator("#rollbox-preview figure.odds")).to_be_visible()

    def skip_the_retries() -> None:  # the page's retries wait on its clock
        for _ in range(8):
            alice.clock.fast_forward(5_000)
            alice.wait_for_timeout(50)

    alice.context.set_offline(True)
    box.fill("Wits + Occult + 1")
    skip_the_retries()
    expect(alice.locator("#rollbox-error")).to_contain_text("No connection")
    expect(box).to_have_attribute("aria-invalid", "false")
    error = alice.locator("#composer-error")
    alice.locator("#composer-roll").click()
    skip_the_retries()
    expect(error).to_have_text("No connection: nothing was done. Try again.")
    assert not Check.objects.filter(campaign=campaign).exists()

    alice.context.set_offline(False)
    alice.locator("#composer-roll").click()
    expect(alice.locator("#feed article.roll")).to_have_count(1, timeout=LIVE)
    expect(error).to_be_hidden()


def test_a_lost_connection_is_said_in_the_pages_words_and_cleared_when_it_is_back(
    accounts, open_page, server
):
    campaign, _ = cofd_table(accounts, manual_dice=True)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/", language="ru")
    live(alice)
    form = alice.locator("#composer")
    alice.locator("#sheets button.trait", has_text="Сообразительность").click()
    expect(alice.locator("#composer-odds .odds")).to_be_visible()
    error = form.locator("#composer-error")
    server.stop()
    expect(alice.locator("#conn")).to_have_attribute("data-state", "offline")
    form.locator("button#composer-roll").click()
    # The page's retries give up after some seconds: then it says so, in Russian.
    expect(error).to_have_text(
        "Нет связи: бросок, возможно, не сделан. Бросьте ещё раз: дважды он не выпадет.",
        timeout=20_000,
    )
    server.start()
    expect(alice.locator("#conn")).to_have_attribute("data-state", "live", timeout=15_000)
    expect(error).to_be_hidden(timeout=LIVE)
    expect(alice.locator("#composer-odds .odds-error")).to_have_count(0)


def test_a_roll_the_server_could_not_make_is_said_in_its_words_and_made_once_asked_again(
    accounts, open_page, server
):
    """The network is fine but the database is busy (another writer holds the campaign past
    DB_LOCK_TIMEOUT_SECONDS): the server answers 503 `busy`, the page retries, then shows the
    server's own reason in the page's language, not "no connection". Asked again once the
    lock is free, the roll is made, once."""
    campaign, _ = cofd_table(accounts)
    server.stop()
    server.env["DB_LOCK_TIMEOUT_SECONDS"] = "0.2"  # the page's retries give up in seconds
    server.start()
    try:
        alice = open_page("alice", f"/campaigns/{campaign.pk}/play/", language="ru")
        live(alice)
        form = alice.locator("#composer")
        alice.locator("#sheets button.trait", has_text="Сообразительность").click()
        form.get_by_label("Зачем").fill("Взлом")
        error = form.locator("#composer-error")
        with transaction.atomic():  # another writer: the campaign's row, SQLite's write lock
            if connection.vendor == "postgresql":  # held longer than the test settings allow
                connection.cursor().execute("SET LOCAL idle_in_transaction_session_timeout = 0")
            Campaign.objects.filter(pk=campaign.pk).update(name=F("name"))
            form.locator("button#composer-roll").click()
            expect(error).to_have_text(
                "Бросок, возможно, не сделан: кампания занята; повторите тот же запрос через"
                " мгновение. Дважды он не выпадет.",
                timeout=20_000,
            )
        expect(alice.locator("#conn")).to_have_attribute("data-state", "live")
        form.locator("button#composer-roll").click()
        expect(item(alice, "Взлом")).to_be_visible(timeout=LIVE)
        expect(error).to_be_hidden()
        assert Check.objects.filter(campaign=campaign, label="Взлом").count() == 1
    finally:
        server.stop()
        del server.env["DB_LOCK_TIMEOUT_SECONDS"]
        server.start()


def made_then_lost(route) -> None:
    """A POST the server makes, whose answer never reaches the page (a venue's wifi)."""
    if route.request.method != "POST":
        route.continue_()
        return
    route.fetch()  # the server rolls (or answers again from the key)
    route.abort()  # and its answer never reaches the page


def made_then_bad_gateway(route) -> None:
    """A POST the server makes, answered by the proxy with a 502 (a worker died after COMMIT)."""
    if route.request.method != "POST":
        route.continue_()
        return
    route.fetch()
    route.fulfill(status=502, content_type="text/html", body="<html>502 Bad Gateway</html>")


def roll_and_lose_the_answers(page, campaign, lose) -> tuple[Any, str, int]:
    """Roll Wits from the form while ``lose`` takes every answer: the page says the roll may not
    have been made (it was). The form, the checks' path and the roll's seq; answers flow again."""
    form = page.locator("#composer")
    page.locator("#sheets button.trait", has_text="Wits").click()
    expect(page.locator("#composer-odds .odds")).to_be_visible()
    checks = f"/api/campaigns/{campaign.pk}/checks/"
    page.route(f"**{checks}", lose)
    form.locator("button#composer-roll").click()
    expect(form.locator("#composer-error")).to_contain_text(
        "may not have been made", timeout=20_000
    )
    page.unroute(f"**{checks}")
    return form, checks, Check.objects.get(campaign=campaign).seq


@pytest.mark.parametrize("lose", [made_then_lost, made_then_bad_gateway])
def test_a_roll_whose_answers_were_lost_is_not_rolled_twice_when_asked_again(
    accounts, open_page, lose
):
    """The server made the roll, and every answer to it was lost (a venue's wifi) or was a
    gateway's 502: the page says it may not have been made; rolled again unchanged, it goes with
    the same Idempotency-Key and the server answers the first roll (a new key rolled a second)."""
    campaign, _ = cofd_table(accounts)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    form, checks, made = roll_and_lose_the_answers(alice, campaign, lose)
    error = form.locator("#composer-error")
    with alice.expect_response(lambda r: r.url.endswith(checks) and r.status < 500) as answer:
        form.locator("button#composer-roll").click()
    assert answer.value.status == 201 and answer.value.json()["seq"] == made, "rolled twice"
    expect(error).to_be_hidden(timeout=LIVE)
    expect(alice.locator("#feed article.roll")).to_have_count(1)
    assert Check.objects.filter(campaign=campaign).count() == 1, "rolled twice"


def test_the_same_roll_asked_long_after_its_answers_were_lost_is_a_roll_of_its_own(
    accounts, open_page
):
    """A roll made, its answers lost, the same roll asked again more than ten minutes later (the
    page's clock moved on: a Perception check asked again an hour on) is rolled anew: the key
    kept for a retry does not answer it with the old roll."""
    campaign, _ = cofd_table(accounts)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    alice.clock.install()
    alice.reload()
    live(alice)
    form, checks, made = roll_and_lose_the_answers(alice, campaign, made_then_lost)
    alice.clock.fast_forward("10:01")
    live(alice)
    with alice.expect_response(lambda r: r.url.endswith(checks) and r.status < 500) as answer:
        form.locator("button#composer-roll").click()
    assert answer.value.status == 201 and answer.value.json()["seq"] > made, "the old roll"
    assert answer.value.headers.get("idempotent-replayed") is None
    assert Check.objects.filter(campaign=campaign).count() == 2


def test_an_error_says_the_servers_message_without_the_apis_field_path(accounts, open_page):
    campaign, _ = cofd_table(accounts, manual_dice=True)
    services.end_session(campaign=campaign, actor=accounts["gm"])
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    form = alice.locator("#composer")
    alice.locator("#sheets button.trait", has_text="Wits").click()
    form.get_by_label("Faces of your physical dice").fill("8 8 8")
    form.locator("button#composer-roll").click()
    error = form.locator("#composer-error")
    expect(error).to_contain_text("no session is open")
    expect(error).not_to_contain_text("session:")
    expect(form.get_by_label("Faces of your physical dice")).not_to_have_attribute(
        "aria-invalid", "true"
    )

    services.start_session(campaign=campaign, actor=accounts["gm"], title="Saturday")
    form.get_by_label("Faces of your physical dice").fill("8 8 8 8 8 8 8 8 8")  # not 3 dice
    form.locator("button#composer-roll").click()
    expect(error).to_contain_text("too many faces")
    expect(error).not_to_have_text(re.compile(r"^That did not work: faces:"))
    faces = form.get_by_label("Faces of your physical dice")
    expect(faces).to_have_attribute("aria-invalid", "true")  # the field the error is about
    assert "composer-error" in (faces.get_attribute("aria-describedby") or "")


def test_a_blind_roll_is_confirmed_beside_the_button(accounts, open_page):
    campaign, _ = cofd_table(accounts)
    boris = open_page("boris", f"/campaigns/{campaign.pk}/play/")
    live(boris)
    roll(boris, "Wits", label="Listen at the door", visibility="GM only")
    result = boris.locator("#composer-result")
    expect(result).to_be_visible()
    expect(result).to_contain_text("Your blind roll went to the GM.")
    expect(result).not_to_contain_text("Listen at the door")


def test_roll_again_whose_answers_were_lost_is_not_rolled_twice_when_pressed_again(
    accounts, open_page
):
    """«Roll again» made on the server, every answer lost: the page says the roll may not have
    been made; pressed again, it goes with the same key and the server answers with the roll it
    made. Once answered, a press is a new roll."""
    campaign, _ = cofd_table(accounts)
    alice = open_page("alice", f"/campaigns/{campaign.pk}/play/")
    live(alice)
    roll(alice, "Wits", label="Read the stones")
    expect(item(alice, "Read the stones")).to_be_visible()
    first = Check.objects.get(campaign=campaign).seq
    card = alice.locator(f"#feed article.roll[data-seq='{first}']")
    again = card.get_by_role("button", name="Roll again")
    expect(again).to_be_visible()
    path = f"/api/campaigns/{campaign.pk}/checks/{first}/again/"

    def answered():
        return alice.expect_response(lambda r: r.url.endswith(path) and r.status < 500)

    alice.route(f"**{path}", made_then_lost)
    again.click()
    expect(alice.locator("#toasts .toast-error")).to_contain_text(
        "may not have been made", timeout=20_000
    )
    lost = Check.objects.filter(campaign=campaign).exclude(seq=first).get().seq
    alice.unroute(f"**{path}")
    with answered() as answer:
        again.click()
    assert answer.value.status == 201 and answer.value.json()["seq"] == lost, "rolled twice"
    assert answer.value.headers.get("idempotent-replayed") == "true"
    assert Check.objects.filter(campaign=campaign).count() == 2
    with answered() as answer:
        again.click()  # answered: pressed again, it is a roll of its own
    assert answer.value.status == 201 and answer.value.json()["seq"] > lost
    assert Check.objects.filter(campaign=campaign).count() == 3
