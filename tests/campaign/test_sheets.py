"""Character sheets through the API, as a player and a GM would use them: the template per
system, every bad field at once (in the user's language), starting resources, trait edits the GM
sees, and favourite rolls."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from campaign import services
from campaign.models import Character
from eventlog.models import Event

pytestmark = pytest.mark.django_db


def client_for(user, language: str = "en") -> APIClient:
    client = APIClient(HTTP_ACCEPT_LANGUAGE=language)
    client.force_authenticate(user)
    return client


def characters_url(campaign) -> str:
    return f"/api/campaigns/{campaign.pk}/characters/"


def test_the_template_lists_the_systems_traits_in_the_users_language(make_campaign, users):
    campaign = make_campaign("cofd")
    ru = client_for(users["alice"], "ru").get(f"/api/campaigns/{campaign.pk}/sheet-template/")
    assert ru.status_code == 200
    groups = {g["key"]: g for g in ru.json()["groups"]}
    assert groups["skills"]["label"] == "Навыки"
    assert len(groups["skills"]["traits"]) == 24 and len(groups["attributes"]["traits"]) == 9
    assert {"key": "Occult", "label": "Оккультизм", "section": "mental"}.items() <= next(
        t for t in groups["skills"]["traits"] if t["key"] == "Occult"
    ).items()
    assert groups["specialties"]["kind"] == "chips" and groups["specialties"]["of"] == "skills"
    assert [r["key"] for r in ru.json()["resources"]] == ["willpower", "beats"]
    every = client_for(users["alice"]).get("/api/sheet-templates/").json()
    assert set(every) == {"d6pool", "storyteller", "nice_damnit", "age", "cofd"}
    assert every["cofd"]["groups"][1]["label"] == "Skills"
    assert every["nice_damnit"]["rank_values"]["pro_1"] == {"bonus": 3, "label": "pro I"}


def test_every_bad_field_is_reported_at_once_in_russian(make_campaign, users):
    campaign = make_campaign("cofd")
    before = Event.objects.count()
    response = client_for(users["alice"], "ru").post(
        characters_url(campaign),
        {
            "name": "",
            "traits": {
                "attributes": {"Wits": 0},
                "skills": {"Brawl 3 (Boxing)": 0, "Telepathy": 2},
            },
            "resources": {"willpower": 40},
        },
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert {
        "name",
        "traits.attributes.Wits",
        "traits.skills.Brawl 3 (Boxing)",
        "traits.skills.Telepathy",
        "resources.willpower",
    } <= set(body)
    assert "Boxing" in body["traits.skills.Brawl 3 (Boxing)"][0]
    for field, messages in body.items():
        if field != "code":
            assert any("\u0400" <= ch <= "\u04ff" for ch in messages[0]), (field, messages)
    assert Event.objects.count() == before


def test_a_spelling_of_a_trait_is_stored_under_its_key(make_campaign, users):
    campaign = make_campaign("cofd")
    response = client_for(users["alice"]).post(
        characters_url(campaign),
        {"name": "Marianne", "traits": {"attributes": {"сообразительность": 3}}},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["traits"]["attributes"] == {"Wits": 3}


def test_a_player_sets_starting_resources_once_then_they_are_the_gms(make_campaign, users):
    campaign = make_campaign("cofd")
    alice = client_for(users["alice"])
    too_many = alice.post(
        characters_url(campaign),
        {"name": "Greedy", "traits": {}, "resources": {"beats": 20}},
        format="json",
    )
    assert too_many.status_code == 400 and "resources.beats" in too_many.json()
    created = alice.post(
        characters_url(campaign),
        {"name": "Marianne", "traits": {}, "resources": {"willpower": 5}},
        format="json",
    )
    assert created.status_code == 201
    assert created.json()["resources"] == {"willpower": 5, "beats": 0}
    url = f"{characters_url(campaign)}{created.json()['id']}/"
    refused = alice.patch(url, {"resources": {"willpower": 6}}, format="json")
    assert refused.status_code == 403
    changed = client_for(users["gm"]).patch(url, {"resources": {"willpower": 6}}, format="json")
    assert changed.status_code == 200 and changed.json()["resources"]["willpower"] == 6


def test_a_players_trait_change_in_a_session_is_an_event_naming_the_change(make_campaign, users):
    campaign = make_campaign("cofd")
    character = services.create_character(
        campaign=campaign,
        actor=users["alice"],
        name="Marianne",
        traits={"attributes": {"Wits": 3}, "skills": {"Occult": 1}},
    )
    services.start_session(campaign=campaign, actor=users["gm"])
    response = client_for(users["alice"]).patch(
        f"{characters_url(campaign)}{character.pk}/",
        {"traits": {"attributes": {"Wits": 3}, "skills": {"Occult": 3}}},
        format="json",
    )
    assert response.status_code == 200
    event = Event.objects.filter(campaign=campaign, type="character.changed").last()
    assert event.actor_id == users["alice"].pk
    assert event.payload["during_session"] is True
    assert event.payload["diff"] == [{"group": "skills", "trait": "Occult", "from": 1, "to": 3}]


def test_favourite_rolls_are_saved_lines_that_read_for_the_sheet(make_campaign, users):
    campaign = make_campaign("cofd")
    character = services.create_character(
        campaign=campaign,
        actor=users["alice"],
        name="Marianne",
        traits={"attributes": {"Wits": 3}, "skills": {"Investigation": 2}},
    )
    url = f"{characters_url(campaign)}{character.pk}/favourites/"
    alice, boris = client_for(users["alice"]), client_for(users["boris"])
    saved = alice.post(url, {"name": "Look", "text": "Wits + Investigation 9again"}, format="json")
    assert saved.status_code == 201
    favourite = saved.json()
    assert favourite["name"] == "Look" and favourite["text"] == "Wits + Investigation 9again"
    typo = alice.post(url, {"text": "Wits + Investigaton"}, format="json")
    assert typo.status_code == 400
    assert typo.json()["at"] == {"start": 7, "end": 19, "word": "Investigaton"}
    assert "Investigation" in typo.json()["suggestions"]
    assert boris.post(url, {"text": "Wits"}, format="json").status_code == 403
    assert alice.get(url).json() == [favourite]
    listed = alice.get(characters_url(campaign)).json()
    assert listed[0]["favourites"] == [favourite]
    assert boris.delete(f"{url}{favourite['id']}/").status_code == 403
    assert alice.delete(f"{url}{favourite['id']}/").status_code == 204
    assert Character.objects.get(pk=character.pk).favourites == []
    assert alice.delete(f"{url}{favourite['id']}/").status_code == 404
