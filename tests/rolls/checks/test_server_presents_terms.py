"""The server says what a check rolls (`roll_terms`, the odds' `terms`) and which allowances the
panels show (`flags`, `table_flags`), so the pages decide neither (issue #11)."""

from __future__ import annotations

import pytest

from campaign import services
from tests.rolls.checks.rulebook import character_state, set_options


def _odds(t, who="alice", **request):
    body = {"character": str(t.characters[who].pk), **request}
    return t.post(who, "checks/odds/", body, expect=200)


def test_a_cofd_pool_of_zero_rolls_a_chance_die_as_the_server_says(table):
    t = table("cofd")
    assert _odds(t, traits=["Wits"], modifiers=[-3])["terms"] == [{"term": "chance_die"}]
    assert _odds(t, traits=["Wits"], again=8, rote=True)["terms"] == [
        {"term": "pool_dice", "n": 3},
        {"term": "again_8"},
        {"term": "rote"},
    ]
    assert _odds(t, traits=["Wits"], again=None)["terms"][1] == {"term": "again_none"}
    check = t.roll("alice", traits=["Wits"], modifiers=[-4], faces=[10])
    assert check["roll_terms"] == [[{"term": "chance_die"}]]


def test_a_d6pool_desperate_roll_is_named_by_the_server(table):
    t = table("d6pool")
    assert _odds(t, traits=["Reaction"], modifiers=[-5])["terms"] == [
        {"term": "pool_dice", "n": -1},
        {"term": "desperate"},
    ]
    check = t.roll("alice", traits=["Reaction"], faces=[4, 5, 6, 1])
    assert check["roll_terms"] == [[{"term": "pool_dice", "n": 4}]]


def test_the_age_focus_is_in_the_servers_sum(table):
    t = table("age")
    terms = _odds(t, traits=["Dexterity"], focus="Acrobatics", modifiers=[1], target=11)["terms"]
    assert terms == [{"term": "dice_sum", "dice": "3d6", "bonus": 6}, {"term": "vs_tn", "n": 11}]
    check = t.roll("alice", traits=["Dexterity"], focus="Acrobatics", faces=[1, 2, 3])
    assert check["roll_terms"] == [[{"term": "dice_sum", "dice": "3d6", "bonus": 5}]]
    # The event of the roll carries them too (the live feed's cards).
    event = t.get("alice", "events/?type=check.rolled")[-1]
    assert event["roll_terms"] == check["roll_terms"]


def test_storyteller_and_nice_damnit_terms(table):
    t = table("storyteller")
    assert _odds(t, traits=["Mental"], difficulty=7)["terms"] == [
        {"term": "pool_dice", "n": 2},
        {"term": "difficulty", "n": 7},
    ]
    n = table("nice_damnit")
    assert _odds(n, traits=["Firearms"])["terms"] == [
        {"term": "dice_sum", "dice": "2d10", "bonus": 2}
    ]


def test_the_parse_preview_carries_the_terms(table):
    t = table("cofd")
    body = {"text": "Wits - 5", "character": str(t.characters["alice"].pk)}
    assert t.post("alice", "checks/parse/", body, expect=200)["terms"] == [{"term": "chance_die"}]


@pytest.mark.parametrize(
    ("system", "options", "flags", "table_flags"),
    [
        ("storyteller", {"free_botch": "per_character"}, [("free_botch", "session")], []),
        ("storyteller", {"free_botch": "per_table"}, [], [("free_botch", "session")]),
        ("storyteller", {"free_botch": "off"}, [], []),
        ("cofd", {}, [("dramatic_failure", "chapter")], []),
        (
            "cofd",
            {"intentional_dramatic_failure": "per_scene"},
            [("dramatic_failure", "scene")],
            [],
        ),
        ("cofd", {"intentional_dramatic_failure": "unlimited"}, [], []),
        ("cofd", {"intentional_dramatic_failure": "off"}, [], []),
        ("age", {}, [], []),
    ],
)
def test_the_state_lists_the_allowances_the_options_track(
    table, system, options, flags, table_flags
):
    t = table(system)
    if options:
        set_options(t, **options)
    row = character_state(t, "alice", viewer="alice")
    assert [(f["rule"], f["period"], f["used"]) for f in row["flags"]] == [
        (*flag, False) for flag in flags
    ]
    state = t.get("alice", "state/")
    assert [(f["rule"], f["period"]) for f in state["table_flags"]] == table_flags


def test_a_used_allowance_is_flagged_used(table):
    t = table("storyteller", free_botch="per_character")
    t.roll("alice", traits=["Mental"], faces=[1, 3])  # a botch: the free botch spent
    row = character_state(t, "alice", viewer="alice")
    assert row["flags"] == [{"rule": "free_botch", "period": "session", "used": True, "open": True}]


@pytest.mark.parametrize("mode", ["per_chapter", "per_scene"])
def test_an_allowance_of_a_period_that_is_not_open_is_not_called_available(table, users, mode):
    """Found playing the demo: the sheet said "dramatic failure (this chapter): available"
    with no chapter open, where the rule refuses every roll. The state says the period is not
    open; the pages say so."""
    t = table("cofd", intentional_dramatic_failure=mode)
    if mode == "per_chapter":
        services.end_chapter(campaign=t.campaign, actor=users["gm"])
    row = character_state(t, "alice", viewer="alice")
    period = mode.removeprefix("per_")
    assert row["flags"] == [
        {"rule": "dramatic_failure", "period": period, "used": False, "open": False}
    ]
    if mode == "per_scene":
        services.start_scene(campaign=t.campaign, actor=users["gm"])
    else:
        services.start_chapter(campaign=t.campaign, actor=users["gm"], title="Two")
    assert character_state(t, "alice", viewer="alice")["flags"][0]["open"] is True


def test_the_characters_say_whom_each_member_acts_for(table):
    t = table("cofd")
    mine = {t.characters["alice"].pk: True, t.characters["boris"].pk: False}
    rows = t.get("alice", "characters/")
    assert {row["id"]: row["acts_for"] for row in rows} == {str(k): v for k, v in mine.items()}
    assert all(row["acts_for"] for row in t.get("gm", "characters/"))
