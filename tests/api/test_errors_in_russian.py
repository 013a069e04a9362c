"""A Russian table hears its errors in Russian: the common refusals of the REST API come back in
the request's language (Accept-Language or the language cookie), with no English left in them."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rest_framework.test import APIClient

from campaign import services

pytestmark = pytest.mark.django_db

CYRILLIC = re.compile("[\u0400-\u04ff]")
# Two English words in a row: a message left untranslated (trait names are single words).
ENGLISH_PHRASE = re.compile(r"\b[a-z]{3,} [a-z]{2,}\b")


def russian(user=None, how: str = "header") -> APIClient:
    client = APIClient(HTTP_ACCEPT_LANGUAGE="ru") if how == "header" else APIClient()
    if how == "cookie":
        client.cookies["django_language"] = "ru"
        client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"  # the cookie wins, as on the pages
    if user is not None:
        client.force_authenticate(user)
    return client


def messages_of(body: dict[str, Any]) -> list[str]:
    found = []
    for key, value in body.items():
        if key in ("code", "at", "suggestions"):
            continue
        found += [str(v) for v in (value if isinstance(value, list) else [value])]
    return found


def assert_russian(response, status: int) -> None:
    assert response.status_code == status, response.content
    messages = messages_of(response.json())
    assert messages, response.json()
    for message in messages:
        assert CYRILLIC.search(message), message
        assert not ENGLISH_PHRASE.search(message), message


@pytest.fixture
def table(make_campaign, users):
    campaign = make_campaign("cofd")
    alice = services.create_character(
        campaign=campaign,
        actor=users["alice"],
        name="Marianne",
        traits={"attributes": {"Wits": 3}, "skills": {"Occult": 2}},
    )
    return campaign, alice


def checks_url(campaign, tail: str = "") -> str:
    return f"/api/campaigns/{campaign.pk}/checks/{tail}"


@pytest.mark.parametrize("how", ["header", "cookie"])
def test_no_session_is_open_in_russian(table, users, how):
    campaign, alice = table
    response = russian(users["alice"], how).post(
        checks_url(campaign), {"character": str(alice.pk), "traits": ["Wits"]}, format="json"
    )
    assert_russian(response, 409)
    assert "session" in response.json()


def test_common_refusals_of_a_roll_in_russian(table, users):
    campaign, alice = table
    services.start_session(campaign=campaign, actor=users["gm"])
    me = {"character": str(alice.pk)}
    cases = [
        (users["alice"], {**me, "traits": ["Telepathy"]}, 400),  # a trait the system lacks
        (users["alice"], {**me, "traits": ["Wits"], "again": 7}, 400),
        (users["alice"], {**me, "traits": ["Wits"], "colour": "red"}, 400),
        (users["alice"], {**me, "traits": ["Wits"], "visibility": "secret"}, 400),
        (users["alice"], {"traits": ["Wits"]}, 400),  # a player rolls for a character
        (users["boris"], {**me, "traits": ["Wits"]}, 403),  # someone else's character
        (users["olga"], {**me, "traits": ["Wits"]}, 403),  # an observer
        (users["stranger"], {**me, "traits": ["Wits"]}, 404),
        (users["alice"], {**me, "traits": ["Wits"], "faces": [1, 2]}, 400),  # server dice
    ]
    for user, body, status in cases:
        assert_russian(russian(user).post(checks_url(campaign), body, format="json"), status)
    odds = russian(users["alice"]).post(
        checks_url(campaign, "odds/"), {**me, "traits": ["Telepathy"]}, format="json"
    )
    assert_russian(odds, 400)


def test_sheet_and_follow_up_refusals_in_russian(table, users):
    campaign, alice = table
    client = russian(users["alice"])
    base = f"/api/campaigns/{campaign.pk}/"
    assert_russian(
        client.post(f"{base}characters/", {"name": "", "traits": {"x": {}}}, format="json"), 400
    )
    assert_russian(
        client.patch(f"{base}characters/{alice.pk}/", {"resources": {"beats": 1}}, format="json"),
        403,
    )
    assert_russian(client.post(f"{base}sessions/", {}, format="json"), 403)
    assert_russian(client.post(f"{base}checks/99/dramatic-failure/", {}, format="json"), 404)
    assert_russian(client.post("/api/join/", {"invite_code": "nope"}, format="json"), 404)


def test_the_bodys_limits_and_the_keys_refusals_in_russian(table, users):
    """The limits every body goes through (and the Idempotency-Key's checks) were English
    f-strings: a Russian table heard "lists hold at most 50 items"."""
    campaign, alice = table
    services.start_session(campaign=campaign, actor=users["gm"])
    client = russian(users["alice"])
    me = {"character": str(alice.pk), "traits": ["Wits"]}
    cases = [
        {**me, "label": "x" * 201},  # text of at most 200 characters
        {**me, "label": "a\x00b"},  # NUL
        {**me, "modifiers": [{"value": 1}] * 51},  # lists of at most 50
        {**me, "pool": 2**40},  # integers within ±2**31-1
        {**me, "x" * 101: 1},  # keys of at most 100 characters
    ]
    for body in cases:
        assert_russian(client.post(checks_url(campaign), body, format="json"), 400)
    bad_json = client.post(checks_url(campaign), "{", content_type="application/json")
    assert bad_json.status_code == 400 and CYRILLIC.search(str(bad_json.json())), bad_json.json()
    bad_key = client.post(checks_url(campaign), me, format="json", HTTP_IDEMPOTENCY_KEY="\n")
    assert_russian(bad_key, 400)
    client.post(checks_url(campaign), me, format="json", HTTP_IDEMPOTENCY_KEY="k")
    reused = client.post(
        checks_url(campaign), {**me, "label": "other"}, format="json", HTTP_IDEMPOTENCY_KEY="k"
    )
    assert_russian(reused, 422)
