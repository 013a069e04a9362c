"""Willpower (RULES 2.11; item 11 of #12): 1 point with the roll, checked under the stream lock,
recorded in the event, restored by the GM, and in the exact odds."""

from __future__ import annotations

from collections import Counter

import pytest

from rolls.systems import odds
from tests.rolls.checks.conftest import first_roll
from tests.rolls.checks.rulebook import character_state, refused, refused_roll
from tests.rolls.checks.test_concurrency import N, run_at_once


def _give(t, who, points):
    response = t.clients["gm"].patch(
        f"{t.url}/characters/{t.characters[who].pk}/",
        {"resources": {"willpower": points}},
        format="json",
    )
    assert response.status_code == 200, response.content


def test_storyteller_willpower_buys_a_success_that_ones_cannot_cancel(table):
    t = table("storyteller")
    _give(t, "alice", 2)
    check = t.roll(
        "alice", traits=["Mental"], pool=3, difficulty=8, willpower=True, faces=[9, 1, 1, 8, 1]
    )  # fmt: skip  B5: S=2, O=3
    roll = first_roll(check)
    assert (check["outcome"], roll["result"]["successes"]) == ("success", 1)
    assert roll["willpower_spent"] == 1 and roll["check"]["willpower"] is True
    assert t.character("alice").resources["willpower"] == 1
    assert character_state(t, "alice")["resources"]["willpower"] == 1


def test_cofd_willpower_adds_three_dice(table):
    t = table("cofd")
    _give(t, "alice", 1)
    roll = first_roll(t.roll("alice", traits=["Wits"], willpower=True, faces=[2] * 6))
    assert roll["check"]["pool"] == 6
    assert {"label": "Willpower", "value": 3, "kind": "willpower"} in roll["breakdown"]
    assert t.character("alice").resources["willpower"] == 0


def test_no_willpower_left_is_a_conflict_and_appends_nothing(table):
    t = table("cofd")
    body = refused_roll(t, "alice", 409, "willpower", traits=["Wits"], willpower=True,
                        faces=[2] * 6)  # fmt: skip
    assert "Willpower" in str(body)


@pytest.mark.parametrize(
    ("request_", "field", "status"),
    [
        ({"willpower": 2}, "willpower", 400),
        ({"willpower": "yes"}, "willpower", 400),
        ({"pool": -9, "willpower": True, "faces": []}, "willpower", 400),
        ({"automatic": True, "pool": 3, "willpower": True, "faces": []}, "willpower", 400),
    ],
)
def test_bad_willpower_requests_are_refused(table, request_, field, status):
    t = table("storyteller")
    _give(t, "alice", 3)
    base = {"traits": ["Physical", "Lockpicking"], "faces": [2] * 7}
    refused_roll(t, "alice", status, field, **{**base, **request_})
    assert t.character("alice").resources["willpower"] == 3


def test_willpower_is_not_a_follow_up_of_a_system_without_it(table):
    t = table("age")
    refused_roll(
        t, "alice", 400, "willpower", traits=["Dexterity"], willpower=True, faces=[1, 2, 3]
    )


def test_the_gm_restores_willpower_with_an_event(table):
    t = table("cofd")
    path = f"characters/{t.characters['alice'].pk}/willpower/"
    refused(t, "alice", path, {"amount": 1}, 403, "role")
    refused(t, "gm", path, {"amount": 0}, 400, "amount")
    refused(t, "gm", path, {"amount": "1"}, 400, "amount")
    before = t.events()
    t.post("gm", path, {"amount": 2}, expect=200)
    assert t.events() == before + 1
    assert t.character("alice").resources["willpower"] == 2
    event = t.get("gm", "events/")[-1]
    assert event["type"] == "character.willpower_restored"


def test_a_retried_restore_with_the_same_idempotency_key_restores_once(table):
    t = table("cofd")
    url = f"{t.url}/characters/{t.characters['alice'].pk}/willpower/"
    answers = [
        t.clients["gm"].post(url, {"amount": 2}, format="json", HTTP_IDEMPOTENCY_KEY="rest-1")
        for _ in range(2)
    ]
    assert [a.status_code for a in answers] == [200, 200]
    assert answers[1].headers["Idempotent-Replayed"] == "true"
    assert t.character("alice").resources["willpower"] == 2


def test_an_empty_willpower_pool_is_refused_in_russian(table):
    t = table("cofd")
    body = {"character": str(t.characters["alice"].pk), "traits": ["Wits"], "willpower": True,
            "faces": [2] * 6}  # fmt: skip
    response = t.clients["alice"].post(
        f"{t.url}/checks/", body, format="json", HTTP_ACCEPT_LANGUAGE="ru"
    )
    assert response.status_code == 409, response.content
    (said,) = response.json()["willpower"]
    assert said.endswith("Alice's hero не хватает Силы воли: для этого броска нужно 1")


def test_the_odds_of_a_roll_with_willpower(table):
    t = table("cofd")
    body = {"character": str(t.characters["alice"].pk), "traits": ["Wits"], "willpower": True}
    answer = t.post("alice", "checks/odds/", body, expect=200)
    assert answer["check"]["pool"] == 6
    assert answer["odds"]["outcomes"] == pytest.approx(odds("cofd", {"pool": 6})["outcomes"])
    st = table("storyteller")
    body = {"character": str(st.characters["alice"].pk), "traits": ["Mental"], "willpower": True}
    assert st.post("alice", "checks/odds/", body, expect=200)["odds"]["outcomes"] == {
        "success": 1.0
    }


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_willpower_rolls_spend_only_what_there_is(table, users):
    t = table("cofd")
    _give(t, "alice", 3)
    body = {"character": str(t.characters["alice"].pk), "traits": ["Wits"], "willpower": True,
            "faces": [2] * 6}  # fmt: skip
    statuses = run_at_once(users["alice"], [(f"{t.url}/checks/", body)] * N)
    assert Counter(statuses) == {"failure": 3, 409: N - 3}
    assert t.character("alice").resources["willpower"] == 0
