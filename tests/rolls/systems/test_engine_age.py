"""age: every worked example of RULES §4.4 (D1-D11), opposed tests, Fortune, validation."""

from fractions import Fraction

import pytest

from rolls.systems import RuleError, age, odds, resolve, rounding


def r(faces: list[int], **kw: object) -> dict:
    return resolve("age", kw, faces)


def test_D1_chase_doubles_give_stunt_points() -> None:
    res = r([3, 3, 4], ability=3, focus=True)
    assert (res["outcome"], res["total"], res["doubles"], res["stunt_points"]) == (
        "rolled",
        15,
        True,
        4,
    )
    res = r([3, 3, 4], ability=3, focus=True, target=11)
    assert (res["outcome"], res["degree"], res["stunt_points"]) == ("success", 4, 4)


def test_D2_fortune_turns_a_failure_into_a_success() -> None:
    before = r([1, 3, 3], target=10)
    assert (before["outcome"], before["total"], before["stunt_points"]) == ("failure", 7, 0)
    after = r([1, 3, 3], target=10, fortune_change={"die": 0, "value": 4})
    assert (after["outcome"], after["total"], after["faces"], after["rolled"]) == (
        "success",
        10,
        [4, 3, 3],
        [1, 3, 3],
    )
    assert (after["doubles"], after["stunt_points"], after["fortune_cost"]) == (True, 3, 4)


def test_D3_changing_the_drama_die_costs_double() -> None:
    res = r([3, 3, 1], target=10, fortune_change={"die": 2, "value": 4})
    assert (res["fortune_cost"], res["total"], res["outcome"], res["stunt_points"]) == (
        8,
        10,
        "success",
        4,
    )


def test_D4_triples_give_no_extra() -> None:
    res = r([6, 6, 6], ability=2, target=11)
    assert (res["total"], res["outcome"], res["stunt_points"]) == (20, "success", 6)


def test_D5_degree_without_stunt_points() -> None:
    res = r([2, 5, 6], ability=1, target=13)
    assert (res["total"], res["outcome"], res["degree"], res["stunt_points"]) == (
        14,
        "success",
        6,
        0,
    )


def test_D6_failed_doubles_generate_but_cannot_spend() -> None:
    res = r([1, 1, 2], ability=1, target=11)
    assert (res["total"], res["outcome"]) == (5, "failure")
    assert (res["stunt_points_generated"], res["stunt_points"], res["degree"]) == (2, 0, None)


def test_D7_reactive_tests_generate_no_stunt_points() -> None:
    res = r([4, 4, 5], ability=2, target=11, active=False)
    assert (res["total"], res["outcome"], res["doubles"], res["stunt_points"]) == (
        15,
        "success",
        True,
        0,
    )


def test_D8_opposed_tie_broken_by_the_drama_die() -> None:
    a = r([2, 3, 5], ability=4)
    b = r([3, 4, 3], ability=4)
    assert (a["total"], b["total"]) == (14, 14)
    assert age.opposed(a, b) == {"winner": "a", "decided_by": "drama", "outcome": "a"}
    assert age.opposed(b, a)["winner"] == "b"


def test_opposed_totals_ability_and_double_ties() -> None:
    hi = r([6, 6, 1], ability=1)
    lo = r([1, 1, 1], ability=1)
    assert age.opposed(hi, lo)["decided_by"] == "total"
    a = r([3, 4, 5], ability=2, focus=True)
    b = r([5, 4, 5], ability=2, focus=False)
    assert (a["total"], a["drama"]) == (b["total"], b["drama"])
    assert age.opposed(a, b) == {"winner": "a", "decided_by": "ability", "outcome": "a"}
    assert age.opposed(a, a)["outcome"] == "reroll"
    assert age.opposed(a, a, double_tie="stalemate")["outcome"] == "stalemate"
    out = r([], focus_required=True)
    assert age.opposed(out, lo)["winner"] == "b"
    assert age.opposed(out, out)["winner"] is None
    with pytest.raises(RuleError):
        age.opposed(a, b, double_tie="coin")


def test_D9_fortune_change_the_character_cannot_afford() -> None:
    change = {"die": 2, "value": 2}
    assert age.fortune_cost(change) == 4
    assert age.fortune_cost(None) == 0


def test_D10_raising_a_regular_die() -> None:
    res = r([5, 3, 6], ability=2, target=18)
    assert (res["total"], res["outcome"]) == (16, "failure")
    res = r([5, 3, 6], ability=2, target=18, fortune_change={"die": 1, "value": 6})
    assert (
        res["faces"],
        res["total"],
        res["outcome"],
        res["stunt_points"],
        res["fortune_cost"],
    ) == ([5, 6, 6], 19, "success", 6, 6)


def test_D11_rounding_up_and_slowed_down() -> None:
    assert rounding.age_round(13 / 2) == 7
    assert rounding.age_round(Fraction(13, 2), down=True) == 6
    assert rounding.round_up(6.0) == 6


def test_focus_required_without_focus_is_an_auto_failure() -> None:
    res = r([], focus_required=True, target=5)
    assert (res["outcome"], res["faces"], res["stunt_points"]) == ("auto_failure", [], 0)
    assert odds("age", {"focus_required": True})["outcomes"] == {"auto_failure": 1.0}
    assert r([1, 2, 3], focus_required=True, focus=True, target=5)["outcome"] == "success"
    with pytest.raises(RuleError, match="expected 0"):
        r([1, 2, 3], focus_required=True)


def test_fortune_dice_option_off_refuses_a_change() -> None:
    with pytest.raises(RuleError, match="Fortune dice are off"):
        r([1, 2, 3], fortune_dice=False, fortune_change={"die": 0, "value": 6})
    assert r([1, 2, 3], fortune_dice=False)["total"] == 6


def test_odds_with_a_fixed_die() -> None:
    o = odds("age", {"target": 10, "fortune_change": {"die": 2, "value": 6}})
    assert o["drama"] == {6: pytest.approx(1.0)}
    plain = odds("age", {"target": 11})
    assert plain["outcomes"]["success"] == pytest.approx(0.5)
    assert plain["totals"][3] == pytest.approx(1 / 216)
    assert odds("age", {})["outcomes"] == {"rolled": pytest.approx(1.0)}


@pytest.mark.parametrize(
    ("check", "key"),
    [
        ({"ability": "2"}, "ability"),
        ({"focus": 1}, "focus"),
        ({"target": 10.0}, "target"),
        ({"active": None}, "active"),
        ({"fortune_change": {"die": 3, "value": 2}}, "die"),
        ({"fortune_change": {"die": 0, "value": 7}}, "value"),
        ({"fortune_change": {"die": 0}}, "value"),
        ({"fortune_change": [0, 2]}, "fortune_change"),
        ({"fortune_change": {"die": True, "value": 2}}, "die"),
    ],
)
def test_invalid_checks(check: dict, key: str) -> None:
    with pytest.raises(RuleError, match=key):
        resolve("age", check, [1, 2, 3])
