"""Modifier groups (RULES 3.2, A.2 cofd.modifier_cap; item 8 of #12): groups the server computes
are refused in requests, and every player group is capped at ±modifier_cap."""

from __future__ import annotations

import random

import pytest

from rolls.systems import cofd
from tests.rolls.checks.conftest import first_roll
from tests.rolls.checks.rulebook import refused_roll

BASE = {"traits": ["Strength", "Brawl"]}  # 2 + 3 = 5 dice


@pytest.mark.parametrize(
    "group",
    [
        "teamwork",
        "retry",
        "willpower",
        "Teamwork",
        " RETRY ",
        "specialty",
        "adrenaline",
        "resistance_willpower",  # would read as Willpower spent to resist, where none was
    ],
)
def test_server_computed_groups_are_refused(table, group):
    t = table("cofd")
    body = refused_roll(
        t, "alice", 400, "modifiers.0", modifiers=[{"group": group, "value": 20}], faces=[2] * 25,
        **BASE,
    )  # fmt: skip
    assert "server" in str(body)


def test_a_player_group_named_retry_cannot_cancel_the_retry_penalty(table):
    t = table("cofd")
    ritual = {**BASE, "task": "lift", "under_pressure": True}
    t.roll("alice", faces=[2] * 5, **ritual)
    refused_roll(
        t, "alice", 400, "modifiers.0", modifiers=[{"group": "retry", "value": 1}],
        faces=[2] * 5, **ritual,
    )  # fmt: skip
    assert first_roll(t.roll("alice", faces=[2] * 4, **ritual))["check"]["pool"] == 4


def test_group_names_differing_only_in_case_are_one_capped_group(table):
    t = table("cofd")
    check = t.roll(
        "alice",
        modifiers=[{"group": "equipment", "value": 5}, {"group": "Equipment ", "value": 5}],
        faces=[2] * 10,
        **BASE,
    )
    assert first_roll(check)["check"]["pool"] == 10


@pytest.mark.parametrize("seed", [5, 6, 7])
@pytest.mark.parametrize("cap", [0, 3, 5])
def test_seeded_player_modifiers_are_capped_per_group(table, seed, cap):
    rng = random.Random(seed)
    t = table("cofd", modifier_cap=cap)
    for _ in range(6):
        mods = [
            {"group": rng.choice(["equipment", "wounds", "cover", "circumstance"]),
             "value": rng.randint(-9, 9)}
            for _ in range(rng.randint(0, 5))
        ]  # fmt: skip
        expected = cofd.capped_pool(5, mods, cap)
        faces = [2] * max(expected, 1)
        roll = first_roll(t.roll("alice", modifiers=mods, faces=faces, **BASE))
        assert roll["check"]["pool"] == expected
        assert sum(line["value"] for line in roll["breakdown"]) == expected


def test_odds_refuse_reserved_groups_too(table):
    t = table("cofd")
    body = {
        "character": str(t.characters["alice"].pk),
        "modifiers": [{"group": "teamwork", "value": 9}],
        **BASE,
    }
    t.post("alice", "checks/odds/", body, expect=400)
