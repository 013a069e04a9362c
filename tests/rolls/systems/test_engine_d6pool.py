"""d6pool: every worked example of RULES §1.11 (A1-A12), the §1.6 table, helpers, validation."""

import pytest

from rolls.systems import RuleError, d6pool, odds, resolve


def r(pool: int, faces: list[int], **kw: object) -> dict:
    return resolve("d6pool", {"pool": pool, **kw}, faces)


def test_A1_cowboy_john_hits_the_bottle_not_the_cork() -> None:
    res = r(4 + 4 - 6, [1, 5])
    assert res["outcome"] == "wrong_way"
    assert (res["hits"], res["ones"], res["successes"]) == (1, 1, 0)


def test_A2_net_one_success() -> None:
    res = r(3, [4, 5, 1])
    assert (res["outcome"], res["successes"]) == ("success", 1)


def test_A3_no_hit_and_a_one_is_critical() -> None:
    res = r(3, [1, 2, 3])
    assert (res["outcome"], res["severity"], res["successes"]) == ("critical_failure", 1, 0)


def test_A4_all_blanks_is_a_plain_failure() -> None:
    assert r(3, [2, 3, 3])["outcome"] == "failure"


def test_A5_hits_outweighed_by_ones_is_not_critical() -> None:
    res = r(3, [6, 1, 1])
    assert res["outcome"] == "failure"
    assert res["successes"] == 0


def test_A6_two_hits_two_ones_is_wrong_way() -> None:
    assert r(4, [1, 1, 4, 5])["outcome"] == "wrong_way"


@pytest.mark.parametrize(
    ("mode", "faces", "outcome"),
    [
        ("all_hits", [4, 6, 5], "success"),  # A7
        ("all_sixes", [4, 6, 5], "failure"),
        ("all_hits", [4, 6, 2], "failure"),  # A8
        ("all_sixes", [4, 6, 2], "failure"),
        ("all_hits", [1, 2, 3], "critical_failure"),  # A9
        ("all_sixes", [1, 2, 3], "critical_failure"),
        ("all_hits", [1, 4, 5], "failure"),  # A10
        ("all_sixes", [1, 4, 5], "failure"),
    ],
)
def test_A7_to_A10_desperate_pool_of_minus_one(mode: str, faces: list[int], outcome: str) -> None:
    res = r(2 + 1 - 4, faces, desperate=mode)
    assert res["outcome"] == outcome
    assert res["mode"] == "desperate"
    assert res["successes"] == (1 if outcome == "success" else 0)


def test_A7_default_desperate_mode_is_all_hits() -> None:
    assert r(-1, [4, 6, 5]) == r(-1, [4, 6, 5], desperate="all_hits")


@pytest.mark.parametrize("mode", ["all_hits", "all_sixes"])
def test_A11_pool_zero_rolls_two_dice(mode: str) -> None:
    res = r(0, [6, 6], desperate=mode)
    assert (res["outcome"], res["successes"]) == ("success", 1)
    with pytest.raises(RuleError, match="expected 2"):
        r(0, [6], desperate=mode)


def test_A12_opposed_defender_wrong_way_is_partial_defence() -> None:
    attacker = r(4, [4, 5, 2, 3])
    assert attacker["successes"] == 2
    pool = d6pool.defender_pool(attacker, 5)
    assert pool == 3
    defender = r(pool, [4, 2, 1])
    assert defender["outcome"] == "wrong_way"
    assert d6pool.opposed(attacker, defender)["outcome"] == "partial_defence"


def test_opposed_branches() -> None:
    hit = r(3, [6, 6, 2])
    assert d6pool.defender_pool(r(2, [2, 3]), 5) is None
    assert d6pool.opposed(r(2, [2, 3]), None)["outcome"] == "no_effect"
    assert d6pool.defender_pool(r(2, [1, 5]), 5) == 5  # wrong way: no penalty
    assert d6pool.opposed(hit, r(3, [6, 2, 2]))["outcome"] == "defended"
    landed = d6pool.opposed(hit, r(3, [1, 2, 2]))
    assert landed == {
        "outcome": "effect",
        "successes": 2,
        "attacker": "success",
        "defender": "critical_failure",
        "defender_mishap": True,
    }
    with pytest.raises(RuleError):
        d6pool.opposed(hit, None)


def test_contest_ranks_by_net_and_handles_ties() -> None:
    a = r(3, [6, 6, 2])  # 2
    b = r(3, [6, 2, 2])  # 1
    c = r(2, [1, 5])  # wrong way: 0
    d = r(3, [1, 1, 2])  # critical: -2
    res = d6pool.contest([a, b, c, d])
    assert (res["outcome"], res["winner"], res["margin"]) == ("winner", 0, 1)
    assert res["scores"] == [2, 1, 0, -2]
    tie = [a, r(5, [6, 6, 2, 2, 3])]
    assert d6pool.contest(tie)["outcome"] == "reroll"
    assert d6pool.contest(tie, tie="draw")["outcome"] == "draw"
    assert d6pool.contest(tie, tie="pool")["winner"] == 1
    with pytest.raises(RuleError):
        d6pool.contest(tie, tie="coin")


def test_long_contest_sums_rounds_floored_at_zero() -> None:
    good, meh, bad = r(3, [6, 6, 2]), r(3, [6, 2, 2]), r(3, [1, 1, 2])
    res = d6pool.long_contest([[good, bad], [bad, meh], [bad, meh]])
    assert res["totals"] == [2, 2] and res["outcome"] == "reroll"
    res = d6pool.long_contest([[good, meh], [meh, meh], [bad, good]], target=3)
    assert (res["winner"], res["rounds"], res["totals"]) == (0, 2, [3, 2])
    assert d6pool.long_contest([[bad, meh]], target=5)["outcome"] == "undecided"


def test_desperate_table_of_section_1_6() -> None:
    for pool, win, crit in [(0, 0.250, 0.139), (-1, 0.125, 0.088), (-2, 0.0625, 0.050)]:
        o = odds("d6pool", {"pool": pool})["outcomes"]
        assert o["success"] == pytest.approx(win, abs=5e-4)
        assert o["critical_failure"] == pytest.approx(crit, abs=5e-4)
        assert "wrong_way" not in o
    assert odds("d6pool", {"pool": 0, "desperate": "all_sixes"})["outcomes"]["success"] == (
        pytest.approx(1 / 36)
    )


def test_single_die_check() -> None:
    assert [r(1, [f])["outcome"] for f in range(1, 7)] == [
        "critical_failure",
        "failure",
        "failure",
        "success",
        "success",
        "success",
    ]
    assert set(odds("d6pool", {"pool": 1})["outcomes"]) == {
        "success",
        "failure",
        "critical_failure",
    }


def test_helpers() -> None:
    assert d6pool.dice_count(-4) == 6
    assert d6pool.adrenaline_dice(True, True) == 2
    assert d6pool.adrenaline_dice(True, False) == 0
    assert d6pool.adrenaline_dice(True, True, dice=3) == 3
    assert d6pool.DIFFICULTY["unreal"] == -8


@pytest.mark.parametrize(
    ("check", "key"),
    [
        ({}, "pool"),
        ({"pool": "3"}, "pool"),
        ({"pool": 2.0}, "pool"),
        ({"pool": True}, "pool"),
        ({"pool": 3, "desperate": "all"}, "desperate"),
        ({"pool": 101}, "101"),
        ({"pool": -99}, "101"),
    ],
)
def test_invalid_checks(check: dict, key: str) -> None:
    with pytest.raises(RuleError, match=key):
        resolve("d6pool", check, [])


def test_face_errors_say_what_was_expected() -> None:
    with pytest.raises(RuleError, match="too few faces: got 2, expected 3 d6"):
        r(3, [1, 2])
    with pytest.raises(RuleError, match="too many faces: got 4, expected 3"):
        r(3, [1, 2, 3, 4])
    with pytest.raises(RuleError, match=r"face #2 is 7; expected a d6 face, an int in 1..6"):
        r(3, [1, 7, 3])
    with pytest.raises(RuleError, match="face #1"):
        r(1, [True])


def test_int_subclasses_are_faces_but_bools_are_not() -> None:
    class Face(int):
        pass

    assert r(2, [Face(4), Face(5)])["outcome"] == "success"
    with pytest.raises(RuleError, match="face #2 is False"):
        r(2, [4, False])
