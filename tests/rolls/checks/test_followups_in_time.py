"""A follow-up belongs to its roll's moment (RULES 3.5; 4.2, step 2: "before the outcome is
narrated"; 5.3): the intentional dramatic failure, a Fortune change and extra Nice! apply to a
roll of the open session only, and a dramatic failure only to a roll made while the rule was on.
Without that, a player could rewrite a failure of a session that is over, or, once the GM turned
the rule to `unlimited`, take a Beat for every old failure of the campaign."""

from __future__ import annotations

import pytest

from campaign import services
from tests.rolls.checks.rulebook import set_options

pytestmark = pytest.mark.django_db

FOLLOW_UPS = [
    # system, options, the roll (a failure), the follow-up and its body, the resource it moves
    ("cofd", {}, {"traits": ["Wits"], "faces": [2, 3, 4]}, "dramatic-failure", {}, "beats"),
    (
        "cofd",
        {"intentional_dramatic_failure": "unlimited"},
        {"traits": ["Wits"], "faces": [2, 3, 4]},
        "dramatic-failure",
        {},
        "beats",
    ),
    (
        "age",
        {},
        {"traits": ["Dexterity"], "target": 15, "faces": [1, 2, 3]},
        "fortune",
        {"die": 0, "value": 6},
        "fortune",
    ),
    (
        "nice_damnit",
        {},
        {"traits": ["Firearms"], "faces": [6, 7]},
        "extra-nice",
        {"count": 1},
        None,
    ),
]


def _offered(t, seq: int) -> list[str]:
    return [offer["kind"] for offer in t.get("alice", f"checks/{seq}/")["follow_ups"]]


@pytest.mark.parametrize(("system", "options", "roll", "action", "body", "resource"), FOLLOW_UPS)
def test_a_follow_up_is_refused_once_its_rolls_session_is_over(
    table, users, system, options, roll, action, body, resource
):
    t = table(system, **options)
    seq = t.roll("alice", **roll)["seq"]
    assert _offered(t, seq), "offered while the session is open"
    before = (t.character("alice").resources, t.events())
    services.end_session(campaign=t.campaign, actor=users["gm"])
    assert _offered(t, seq) == []
    services.start_session(campaign=t.campaign, actor=users["gm"], title="Next week")
    ended = t.events()
    refused = t.post("alice", f"checks/{seq}/{action}/", body, expect=409)
    assert "session" in refused and "over" in refused["session"][0]
    assert (t.character("alice").resources, t.events()) == (before[0], ended)
    assert _offered(t, seq) == []
    # A roll of the session now open is still the player's to change.
    now = t.roll("alice", **roll)["seq"]
    t.post("alice", f"checks/{now}/{action}/", body, expect=200)
    if resource is not None:
        assert t.character("alice").resources != before[0]


def test_unlimited_dramatic_failures_earn_no_beats_from_the_campaigns_history(table, users):
    t = table("cofd", intentional_dramatic_failure="unlimited")
    old = [t.roll("alice", traits=["Wits"], faces=[2, 3, 4])["seq"] for _ in range(3)]
    services.end_session(campaign=t.campaign, actor=users["gm"])
    services.end_chapter(campaign=t.campaign, actor=users["gm"])
    for seq in old:
        t.post("alice", f"checks/{seq}/dramatic-failure/", expect=409)
    assert t.character("alice").resources.get("beats", 0) == 0


def test_a_roll_made_while_dramatic_failures_were_off_stays_as_it_was(table):
    t = table("cofd", intentional_dramatic_failure="off")
    seq = t.roll("alice", traits=["Wits"], faces=[2, 3, 4])["seq"]
    t.post("alice", f"checks/{seq}/dramatic-failure/", expect=409)
    set_options(t, intentional_dramatic_failure="unlimited")
    refused = t.post("alice", f"checks/{seq}/dramatic-failure/", expect=409)
    assert "made while intentional dramatic failures were off" in refused["check"][0]
    assert _offered(t, seq) == []
    later = t.roll("alice", traits=["Wits"], faces=[2, 3, 4])["seq"]  # made under the rule
    assert _offered(t, later) == ["dramatic_failure"]
    t.post("alice", f"checks/{later}/dramatic-failure/", expect=200)
    assert t.character("alice").resources["beats"] == 1
