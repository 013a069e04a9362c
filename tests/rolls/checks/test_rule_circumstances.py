"""Who sets the circumstances (item 10 of #12): `under_pressure`, `extended` (CofD) and
`stressful` (Storyteller) are the GM's in a call, the player's declaration on their own roll
(recorded and shown), and a GM-set campaign default otherwise; `chance_die_explodes` is an
option."""

from __future__ import annotations

import pytest

from tests.rolls.checks.conftest import first_roll
from tests.rolls.checks.rulebook import set_options


def test_a_players_declared_circumstances_are_recorded_for_the_gm(table):
    t = table("cofd")
    roll = first_roll(t.roll("alice", traits=["Wits"], under_pressure=True, faces=[2, 3, 4]))
    assert roll["circumstances"]["under_pressure"] == {"value": True, "by": "player"}
    assert roll["circumstances"]["extended"] == {"value": False, "by": "default"}
    seen_by_gm = first_roll(t.get("gm", "checks/")[-1])
    assert seen_by_gm["circumstances"] == roll["circumstances"]


def test_the_gm_sets_a_campaign_default_that_a_roll_falls_back_to(table):
    t = table("cofd")
    set_options(t, under_pressure=True)
    ritual = {"traits": ["Wits", "Occult"], "task": "ritual"}
    t.roll("alice", faces=[2] * 5, **ritual)
    second = first_roll(t.roll("alice", faces=[2] * 4, **ritual))
    assert second["check"]["pool"] == 4, "the default puts the retry under pressure"
    assert second["circumstances"]["under_pressure"] == {"value": True, "by": "default"}
    calm = first_roll(t.roll("alice", under_pressure=False, faces=[2] * 5, **ritual))
    assert calm["circumstances"]["under_pressure"]["by"] == "player"


def test_storyteller_stressful_default_forbids_automatic_success(table):
    t = table("storyteller", stressful=True)
    body = {"traits": ["Physical", "Lockpicking"], "pool": -1, "automatic": True, "faces": []}
    t.roll("alice", expect=400, **body)
    roll = first_roll(t.roll("alice", stressful=False, **body))
    assert roll["circumstances"]["stressful"] == {"value": False, "by": "player"}


def test_a_calls_circumstances_are_the_gms(table):
    t = table("cofd")
    alice = str(t.characters["alice"].pk)
    call = t.post(
        "gm", "calls/",
        {"characters": [alice], "request": {"pool": 2, "under_pressure": True}}, expect=201,
    )  # fmt: skip
    roll = first_roll(t.roll("alice", call=call["id"], faces=[2, 3]))
    assert roll["circumstances"]["under_pressure"] == {"value": True, "by": "call"}


@pytest.mark.parametrize("explodes", [False, True])
def test_chance_die_explodes_is_a_gm_option(table, explodes):
    t = table("cofd", chance_die_explodes=explodes)
    faces = [10, 8] if explodes else [10]
    roll = first_roll(t.roll("alice", pool=-5, traits=["Wits"], faces=faces))
    assert roll["check"]["chance_die_explodes"] is explodes
    assert roll["result"]["successes"] == (2 if explodes else 1)
    t.roll("alice", expect=400, pool=-5, traits=["Wits"], chance_die_explodes=True, faces=[10, 8])


def test_rule_options_list_the_new_options(table):
    options = table("cofd").get("gm", "")["options"]
    assert options["chance_die_explodes"] is False
    assert options["under_pressure"] is False and options["extended"] is False
