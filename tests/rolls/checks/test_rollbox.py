"""The roll box, roll again and calls across sheets, through the API as a table uses them."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from campaign import services
from eventlog.models import Event
from rolls.models import Check

pytestmark = pytest.mark.django_db

MARIANNE = {
    "attributes": {"Wits": 3, "Composure": 2},
    "skills": {"Occult": 2, "Investigation": 3},
    "specialties": {"Investigation": ["Crime scenes"]},
}
THEO = {"attributes": {"Wits": 2, "Composure": 3, "Resolve": 2}, "skills": {"Brawl": 3}}


def client(user, language: str = "en") -> APIClient:
    api = APIClient(HTTP_ACCEPT_LANGUAGE=language)
    api.force_authenticate(user)
    return api


@pytest.fixture
def table(make_campaign, users):
    campaign = make_campaign("cofd", options={"manual_dice": True})
    services.start_session(campaign=campaign, actor=users["gm"])
    marianne = services.create_character(
        campaign=campaign, actor=users["alice"], name="Marianne", traits=MARIANNE
    )
    theo = services.create_character(
        campaign=campaign, actor=users["boris"], name="Theo Harris", traits=THEO
    )
    return campaign, marianne, theo


def parse(campaign, user, text, **extra):
    return client(user, extra.pop("language", "en")).post(
        f"/api/campaigns/{campaign.pk}/checks/parse/", {"text": text, **extra}, format="json"
    )


def test_a_line_previews_the_check_and_its_exact_odds(table, users):
    campaign, marianne, _ = table
    response = parse(
        campaign,
        users["alice"],
        "Wits + Investigation (Crime scenes) 8again rote +1 equipment",
        character=str(marianne.pk),
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["request"] == {
        "character": str(marianne.pk),
        "traits": ["Wits", "Investigation"],
        "specialty": "Crime scenes",
        "again": 8,
        "rote": True,
        "modifiers": [{"value": 1, "label": "equipment", "group": "equipment"}],
    }
    assert body["check"]["pool"] == 3 + 3 + 1 + 1
    assert body["check"]["again"] == 8 and body["check"]["rote"] is True
    assert abs(sum(body["odds"]["outcomes"].values()) - 1) < 1e-9
    odds = client(users["alice"]).post(
        f"/api/campaigns/{campaign.pk}/checks/odds/", body["request"], format="json"
    )
    assert odds.json()["odds"] == body["odds"]  # one decision, two doors
    assert [t["kind"] for t in body["tokens"]][:3] == ["trait", "sign", "trait"]
    before = Event.objects.count()
    assert Event.objects.count() == before  # a preview logs nothing


def test_token_labels_follow_the_language(table, users):
    campaign, marianne, _ = table
    body = parse(
        campaign, users["alice"], "wits + occult", character=str(marianne.pk), language="ru"
    ).json()
    assert [t.get("label") for t in body["tokens"] if t["kind"] == "trait"] == [
        "Сообразительность",
        "Оккультизм",
    ]


def test_a_trait_the_sheet_lacks_counts_as_zero_and_shows_as_missing(table, users):
    campaign, marianne, _ = table
    body = parse(campaign, users["alice"], "Wits + Brawl", character=str(marianne.pk)).json()
    assert body["check"]["pool"] == 3
    assert body["breakdown"][1] == {"label": "Brawl", "value": 0, "kind": "skills", "missing": True}


def test_errors_point_at_the_word_in_the_users_language(table, users):
    campaign, marianne, _ = table
    typo = parse(campaign, users["alice"], "Wits + Ocult", character=str(marianne.pk))
    assert typo.status_code == 400
    assert typo.json()["at"] == {"start": 7, "end": 12, "word": "Ocult"}
    assert typo.json()["suggestions"] == ["Occult"]
    ru = parse(campaign, users["alice"], "Wits + Ocult", character=str(marianne.pk), language="ru")
    assert "не черта" in ru.json()["text"][0]
    unknown_spec = parse(
        campaign, users["alice"], "Wits + Occult (Ghosts)", character=str(marianne.pk)
    )
    assert unknown_spec.status_code == 400
    assert unknown_spec.json()["at"]["word"] == "(Ghosts)"
    assert unknown_spec.json()["field"] == "specialty"


def test_vs_a_character_is_a_cofd_resistance_from_their_sheet(table, users):
    campaign, marianne, _ = table
    body = parse(
        campaign, users["alice"], "Wits + Occult vs @Theo Composure", character=str(marianne.pk)
    ).json()
    assert body["request"]["resistance"] == {"traits": ["Composure"], "character": str(_.pk)}
    assert {
        "value": -3,
        "label": "Composure (Theo Harris)",
        "kind": "resistance",
        "traits": ["Composure"],
        "resister_name": "Theo Harris",
    } in body["breakdown"]
    assert body["check"]["pool"] == 3 + 2 - 3
    nobody = parse(
        campaign, users["alice"], "Wits vs @Nobody Composure", character=str(marianne.pk)
    )
    assert nobody.status_code == 400 and nobody.json()["at"]["word"] == "@Nobody"


def test_a_player_cannot_preview_someone_elses_sheet(table, users):
    campaign, _, theo = table
    response = parse(campaign, users["alice"], "Wits", character=str(theo.pk))
    assert response.status_code == 403


def test_roll_again_repeats_ones_own_request(table, users):
    campaign, marianne, _ = table
    alice = client(users["alice"])
    base = f"/api/campaigns/{campaign.pk}/checks/"
    first = alice.post(
        base,
        {
            "character": str(marianne.pk),
            "traits": ["Wits", "Occult"],
            "again": 9,
            "visibility": "private",
            "faces": [8, 2, 3, 4, 5],
        },
        format="json",
    )
    assert first.status_code == 201, first.json()
    seq = first.json()["seq"]
    again = alice.post(f"{base}{seq}/again/", {"faces": [1, 1, 1, 1, 1]}, format="json")
    assert again.status_code == 201, again.json()
    repeat = Check.objects.get(campaign=campaign, seq=again.json()["seq"])
    assert repeat.data["request"]["again"] == 9 and repeat.visibility == "private"
    assert repeat.data["rolls"][0]["faces"] == [1, 1, 1, 1, 1]
    assert client(users["boris"]).post(f"{base}{seq}/again/", {}, format="json").status_code == 403
    assert client(users["gm"]).post(f"{base}{seq}/again/", {}, format="json").status_code == 403
    assert alice.post(f"{base}{seq}/again/", {"traits": ["Wits"]}, format="json").status_code == 400


def test_a_call_for_several_characters_counts_a_missing_skill_as_zero(table, users):
    campaign, marianne, theo = table
    gm = client(users["gm"])
    called = gm.post(
        f"/api/campaigns/{campaign.pk}/calls/",
        {"characters": [str(marianne.pk), str(theo.pk)], "request": {"traits": ["Wits", "Occult"]}},
        format="json",
    )
    assert called.status_code == 201, called.json()
    call_id = called.json()["id"]
    answer = client(users["boris"]).post(
        f"/api/campaigns/{campaign.pk}/checks/",
        {"character": str(theo.pk), "call": call_id, "faces": [8, 8]},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    breakdown = answer.json()["data"]["rolls"][0]["breakdown"]
    assert breakdown[1] == {"label": "Occult", "value": 0, "kind": "skills", "missing": True}
    refused = gm.post(
        f"/api/campaigns/{campaign.pk}/calls/",
        {"characters": [str(marianne.pk)], "request": {"traits": ["Telepathy"]}},
        format="json",
    )
    assert refused.status_code == 400 and "request.traits" in refused.json()
    # Rolling again an answer is a plain roll: the call is not answered twice.
    again = client(users["boris"]).post(
        f"/api/campaigns/{campaign.pk}/checks/{answer.json()['seq']}/again/",
        {"faces": [1, 2]},
        format="json",
    )
    assert again.status_code == 201, again.json()
    assert Check.objects.get(campaign=campaign, seq=again.json()["seq"]).data["call_id"] is None


def test_a_rules_lawyer_gets_nothing_from_the_box(table, users):
    """Odd input is a 400 naming the text; a repeat cannot smuggle in a new request."""
    campaign, marianne, theo = table
    me = str(marianne.pk)
    assert parse(campaign, users["alice"], "x" * 5000, character=me).status_code == 400
    assert parse(campaign, users["alice"], 42, character=me).json()["text"]
    assert parse(campaign, users["alice"], "Wits", character=me, extra=1).status_code == 400
    huge = parse(campaign, users["alice"], "101d10", character=me)
    assert huge.status_code == 400 and huge.json()["at"]["word"] == "101d10"
    # The box's words cannot reach past the sheet: another's specialty, or a GM-only option.
    foreign = parse(campaign, users["alice"], "Brawl (Boxing)", character=me)
    assert foreign.status_code == 400
    alice = client(users["alice"])
    rolled = alice.post(
        f"/api/campaigns/{campaign.pk}/checks/",
        {"character": me, "traits": ["Wits"], "faces": [1, 2, 3]},
        format="json",
    )
    seq = rolled.json()["seq"]
    smuggled = alice.post(
        f"/api/campaigns/{campaign.pk}/checks/{seq}/again/",
        {"character": str(theo.pk), "faces": [8, 8, 8]},
        format="json",
    )
    assert smuggled.status_code == 400 and "character" in smuggled.json()


def test_a_group_check_typed_once_reads_every_sheet_and_previews_each(table, users):
    """The GM ticks several characters and types the line once: the request is the one a call
    takes (no character), the odds are each character's (a trait a sheet lacks counts 0)."""
    campaign, marianne, theo = table
    ids = [str(marianne.pk), str(theo.pk)]
    response = parse(campaign, users["gm"], "Wits + Investigation", characters=ids)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["request"] == {"traits": ["Wits", "Investigation"]}
    assert [(p["character"], p["name"], p["check"]["pool"]) for p in body["previews"]] == [
        (ids[0], "Marianne", 3 + 3),
        (ids[1], "Theo Harris", 2 + 0),
    ]
    assert body["previews"][1]["breakdown"][1]["missing"] is True
    assert body["odds"] == body["previews"][0]["odds"]  # the first one's, as for one character
    called = client(users["gm"]).post(
        f"/api/campaigns/{campaign.pk}/calls/",
        {"characters": ids, "request": body["request"]},
        format="json",
    )
    assert called.status_code == 201, called.json()  # what the box read is what a call takes


def test_a_group_check_knows_a_custom_trait_of_any_of_its_sheets(make_campaign, users):
    campaign = make_campaign("storyteller")
    services.start_session(campaign=campaign, actor=users["gm"])
    veronica = services.create_character(
        campaign=campaign,
        actor=users["alice"],
        name="Veronica",
        traits={"attributes": {"Mental": 3}, "abilities": {"Alertness": 2}},
    )
    hall = services.create_character(
        campaign=campaign, actor=users["boris"], name="Hall", traits={"attributes": {"Mental": 2}}
    )
    ids = [str(veronica.pk), str(hall.pk)]
    body = parse(campaign, users["gm"], "Mental + Alertness diff 6", characters=ids).json()
    assert body["request"]["traits"] == ["Mental", "Alertness"]
    assert [p["check"]["pool"] for p in body["previews"]] == [5, 2]


def test_a_group_check_is_validated_as_a_call_is(table, users):
    campaign, marianne, theo = table
    ids = [str(marianne.pk), str(theo.pk)]
    for bad in ([], "x", [None], [str(marianne.pk)] * 21):
        response = parse(campaign, users["gm"], "Wits", characters=bad)
        assert response.status_code == 400 and "characters" in response.json(), bad
    both = parse(campaign, users["gm"], "Wits", characters=ids, character=ids[0])
    assert both.status_code == 400
    # A player may not preview another's sheet through a group either.
    assert parse(campaign, users["alice"], "Wits", characters=ids).status_code == 403
    # A specialty one sheet lacks is refused, naming whose sheet.
    refused = parse(campaign, users["gm"], "Investigation (Crime scenes)", characters=ids)
    assert refused.status_code == 400
    assert refused.json()["character"] == ids[1] and "Theo Harris" in refused.json()["text"][0]
