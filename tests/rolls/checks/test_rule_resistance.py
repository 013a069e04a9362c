"""CofD resistance and the Willpower that raises it (#12 item 11, #15's note), through the API with
exact faces: a resistance is a part of the pool, not a modifier group (the ±5 cap of RULES 3.2
does not cut it); 1 Willpower of the resisting character gives +2 to the trait (CofD 2e), declared
by whoever plays that character or by the GM's call, checked under the stream lock."""

from __future__ import annotations

from tests.rolls.checks.conftest import first_roll
from tests.rolls.checks.rulebook import refused, refused_roll
from tests.rolls.checks.test_rule_willpower import _give


def _boris(t, **extra):
    return {"character": str(t.characters["boris"].pk), "traits": ["Strength"], **extra}


def test_a_resistance_is_not_cut_by_the_modifier_cap(table):
    t = table("cofd")
    # Wits 3 + Occult 2 + 5 dice - a resistance of 7 = 3 dice (the cap would have let 5 through).
    check = t.roll(
        "alice", traits=["Wits", "Occult"], pool=5, resistance={"value": 7}, faces=[8, 8, 1]
    )
    roll = first_roll(check)
    assert roll["check"]["pool"] == 3
    assert (check["outcome"], roll["result"]["successes"]) == ("success", 2)
    assert {"label": "7", "value": -7, "kind": "resistance"} in roll["breakdown"]
    assert not any(line.get("cap") for line in roll["breakdown"])
    # A player's own group named "resistance" would stand in for the server's: refused.
    refused_roll(
        t, "alice", 400, "modifiers.0", traits=["Wits"],
        modifiers=[{"group": "resistance", "value": -7}], faces=[8],
    )  # fmt: skip


def test_a_resistance_from_the_targets_sheet(table):
    t = table("cofd")
    check = t.roll("alice", traits=["Wits", "Occult"], resistance=_boris(t), faces=[9, 2, 3])
    roll = first_roll(check)
    assert roll["check"]["pool"] == 3 + 2 - 2
    # The label for the API; the traits and whose they are, for a reader's own words.
    assert {
        "label": "Strength (Boris's hero)",
        "value": -2,
        "kind": "resistance",
        "traits": ["Strength"],
        "resister_name": "Boris's hero",
    } in roll["breakdown"]
    assert check["outcome"] == "success"


def test_the_resisting_characters_willpower_raises_the_trait_by_two(table):
    t = table("cofd")
    _give(t, "boris", 2)
    # The GM plays the scene: alice's hero against boris's, who spends Willpower to resist.
    check = t.roll(
        "gm",
        character=str(t.characters["alice"].pk),
        traits=["Wits", "Occult"],
        resistance=_boris(t, willpower=True),
        faces=[10, 10, 8],  # 5 - 2 - 2 = 1 die; its 10 explodes twice
    )
    roll = first_roll(check)
    assert roll["check"]["pool"] == 1
    assert roll["result"]["successes"] == 3
    assert {
        "label": "resistance_willpower",
        "value": -2,
        "kind": "resistance_willpower",
    } in roll["breakdown"]
    assert roll["resistance_willpower_spent"] == {
        "character_id": str(t.characters["boris"].pk),
        "points": 1,
    }
    assert t.character("boris").resources["willpower"] == 1
    assert t.character("alice").resources.get("willpower", 0) == 0
    # Boris's player sees his balance fall, through the state like every resource.
    state = t.get("boris", "state/")
    row = next(c for c in state["characters"] if c["id"] == str(t.characters["boris"].pk))
    assert row["resources"]["willpower"] == 1


def test_the_player_of_the_resisting_character_spends_it_on_a_gm_roll_only_through_the_gm(table):
    t = table("cofd")
    _give(t, "boris", 3)
    # Alice does not play boris's hero: she cannot spend his Willpower.
    refused_roll(
        t, "alice", 403, "resistance.willpower", traits=["Wits"],
        resistance=_boris(t, willpower=True), faces=[8, 8],
    )  # fmt: skip
    assert t.character("boris").resources["willpower"] == 3


def test_no_willpower_left_to_resist_is_a_conflict_and_appends_nothing(table):
    t = table("cofd")
    body = refused(
        t, "gm", "checks/",
        {"character": str(t.characters["alice"].pk), "traits": ["Wits"],
         "resistance": _boris(t, willpower=True), "faces": [8]},
        409, "resistance.willpower",
    )  # fmt: skip
    # Not the balance: a hidden roll may have spent what the others still see on the sheet.
    assert "Boris's hero has not enough Willpower: this roll needs 1" in str(body)


def test_bad_resistances_are_refused_naming_the_field(table):
    t = table("cofd")
    _give(t, "alice", 1)
    cases = [
        ({"value": -1}, "resistance.value"),
        ({"value": 3, "traits": ["Strength"]}, "resistance"),
        ({"traits": ["Strength"]}, "resistance.character"),
        ({"value": 2, "willpower": True}, "resistance.willpower"),
        ({"value": 2, "willpower": "yes"}, "resistance.willpower"),
        ({"value": 2, "extra": 1}, "resistance"),
        ({"character": str(t.characters["alice"].pk), "value": 2}, "resistance.character"),
    ]
    for resistance, field in cases:
        refused_roll(
            t, "alice", 400, field, traits=["Wits"], resistance=resistance, faces=[8, 8, 8]
        )
    age = table("age")
    refused_roll(
        age, "alice", 400, "resistance", traits=["Dexterity"], resistance={"value": 1},
        faces=[1, 2, 3],
    )  # fmt: skip


def test_a_call_fixes_the_resistance_and_the_answer_spends_both_willpowers(table):
    t = table("cofd")
    _give(t, "alice", 1)
    _give(t, "boris", 1)
    call = t.post(
        "gm",
        "calls/",
        {
            "characters": [str(t.characters["alice"].pk)],
            "request": {"traits": ["Wits", "Occult"], "resistance": _boris(t, willpower=True)},
        },
        expect=201,
    )
    # The answer cannot change the resistance; it may spend alice's own Willpower.
    refused_roll(t, "alice", 400, "resistance", call=call["id"], resistance={"value": 0},
                 faces=[8])  # fmt: skip
    check = t.roll("alice", call=call["id"], willpower=True, faces=[8, 8, 8, 2])
    roll = first_roll(check)
    assert roll["check"]["pool"] == 3 + 2 + 3 - 2 - 2
    assert (roll["willpower_spent"], roll["result"]["successes"]) == (1, 3)
    assert t.character("alice").resources["willpower"] == 0
    assert t.character("boris").resources["willpower"] == 0


def test_a_call_naming_a_bad_resistance_is_refused(table):
    t = table("cofd")
    refused(
        t, "gm", "calls/",
        {"characters": [str(t.characters["alice"].pk)],
         "request": {"traits": ["Wits"], "resistance": {"traits": ["Strength"]}}},
        400, "request.resistance.character",
    )  # fmt: skip


def test_the_odds_include_the_resistance_and_its_willpower(table):
    t = table("cofd")
    body = {
        "character": str(t.characters["alice"].pk),
        "traits": ["Wits", "Occult"],
        "resistance": {"value": 4, "character": str(t.characters["boris"].pk), "willpower": True},
    }
    assert t.post("gm", "checks/odds/", body, expect=200)["check"]["pool"] == 5 - 4 - 2
    assert t.post("gm", "checks/odds/", body, expect=200)["terms"] == [{"term": "chance_die"}]
    refused(t, "alice", "checks/odds/", body, 403, "resistance.willpower")


def test_the_roll_box_willpower_word_on_the_roll_and_on_the_resistance(table):
    t = table("cofd")
    _give(t, "alice", 1)
    _give(t, "boris", 1)
    alice = str(t.characters["alice"].pk)
    preview = t.post(
        "gm",
        "checks/parse/",
        {"text": "Wits + Occult сила воли vs @Boris Strength воля", "character": alice},
        expect=200,
    )
    assert preview["request"]["willpower"] is True
    assert preview["request"]["resistance"] == {
        "traits": ["Strength"],
        "character": str(t.characters["boris"].pk),
        "willpower": True,
    }
    assert preview["check"]["pool"] == 3 + 2 + 3 - 2 - 2
    check = t.roll("gm", **{**preview["request"], "faces": [8, 1, 1, 1]})
    assert first_roll(check)["result"]["successes"] == 1
    assert t.character("alice").resources["willpower"] == 0
    assert t.character("boris").resources["willpower"] == 0
