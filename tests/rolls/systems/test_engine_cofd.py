"""cofd: every worked example of RULES §3.10 (C1-C17), the per-roll rules, validation."""

import pytest

from rolls.systems import RuleError, cofd, odds, resolve


def r(pool: int, faces: list[int], **kw: object) -> dict:
    return resolve("cofd", {"pool": pool, **kw}, faces)


def test_C1_ten_explodes() -> None:
    res = r(3 + 2, [8, 10, 3, 2, 7, 4])
    assert (res["outcome"], res["successes"]) == ("success", 2)
    assert res["dice"] == [[8], [10, 4], [3], [2], [7]]


def test_C2_explosion_chain_ends_on_a_success() -> None:
    res = r(1, [10, 10, 9])
    assert (res["outcome"], res["successes"], res["dice"]) == ("success", 3, [[10, 10, 9]])


def test_C3_eight_again() -> None:
    assert r(2, [8, 3, 5], again=8)["successes"] == 1
    with pytest.raises(RuleError, match="too many faces"):
        r(2, [8, 3, 5])  # with 10-again the 8 does not explode


def test_C4_rote_rerolls_one_to_seven_in_die_order() -> None:
    res = r(3, [2, 9, 7, 8, 1], rote=True)
    assert res["successes"] == 2
    assert (res["dice"], res["rerolled"]) == ([[2, 8], [9], [7, 1]], [0, 2])


def test_C5_rote_then_explosions() -> None:
    res = r(2, [10, 4, 10, 3, 8], rote=True)
    assert res["successes"] == 3
    assert (res["dice"], res["rerolled"]) == ([[10, 3], [4, 10, 8]], [1])


def test_C6_chance_die_ten_does_not_explode() -> None:
    pool = cofd.capped_pool(
        2 + 1, [{"group": "circumstance", "value": -3}, {"group": "wound", "value": -1}]
    )
    assert pool == -1
    res = r(pool, [10])
    assert (res["outcome"], res["successes"], res["chance_die"]) == ("success", 1, True)
    with pytest.raises(RuleError, match="too many"):
        r(pool, [10, 10])


def test_C6_chance_die_explodes_under_the_first_edition_flag() -> None:
    res = r(0, [10, 10, 8], chance_die_explodes=True)
    assert (res["successes"], res["dice"]) == (3, [[10, 10, 8]])
    with pytest.raises(RuleError, match="too few"):
        r(0, [10], chance_die_explodes=True)
    # the chance die ignores 8-again, its explosions too
    assert r(0, [10, 9], chance_die_explodes=True, again=8)["successes"] == 2
    assert r(0, [10], chance_die_explodes=True, again=None)["successes"] == 1


def test_C7_chance_die_one_is_a_dramatic_failure() -> None:
    res = r(0, [1])
    assert res["outcome"] == "dramatic_failure"
    assert cofd.beats(res) == 0  # A.2 default: beat_on_dramatic_failure false
    assert cofd.beats(res, beat_on_dramatic_failure=True) == 1


def test_C8_rote_never_rerolls_a_dramatic_failure() -> None:
    assert r(0, [1], rote=True)["outcome"] == "dramatic_failure"
    with pytest.raises(RuleError, match="too many"):
        r(0, [1, 10], rote=True)


def test_C9_rote_chance_die_rerolled_to_ten() -> None:
    res = r(0, [5, 10], rote=True)
    assert (res["outcome"], res["dice"], res["rerolled"]) == ("success", [[5, 10]], [0])
    assert r(0, [5, 1], rote=True)["outcome"] == "dramatic_failure"  # still a chance die


def test_C10_rote_chance_die_eight_is_not_rerolled() -> None:
    assert r(0, [8], rote=True)["outcome"] == "failure"
    assert r(0, [9], rote=True)["rerolled"] == []


def test_C11_five_successes_is_exceptional() -> None:
    res = r(6, [8, 8, 9, 9, 10, 2, 3])
    assert (res["outcome"], res["successes"]) == ("exceptional_success", 5)
    assert r(6, [8, 8, 9, 9, 10, 2, 3], exceptional_at=3)["outcome"] == "exceptional_success"
    assert r(6, [8, 8, 9, 9, 10, 2, 3], exceptional_at=6)["outcome"] == "success"


def test_C12_weapon_bonus_on_a_success() -> None:
    res = r(4, [8, 2, 3, 4], extra_successes=2)
    assert (res["outcome"], res["successes"]) == ("success", 3)
    assert r(4, [8, 8, 3, 4], extra_successes=3)["outcome"] == "exceptional_success"
    assert r(0, [10], extra_successes=2)["successes"] == 3


def test_C13_no_weapon_bonus_on_a_failure() -> None:
    res = r(4, [2, 3, 4, 5], extra_successes=2)
    assert (res["outcome"], res["successes"]) == ("failure", 0)


def test_C14_teamwork() -> None:
    helper_a = r(3, [8, 9, 1])
    helper_b = r(0, [1])
    bonus = cofd.teamwork_bonus([helper_a, helper_b])
    assert bonus == 2 - 4
    assert cofd.capped_pool(5, [{"group": "teamwork", "value": bonus}]) == 3
    many = [r(8, [8] * 8)]  # +8: uncapped by default (§3.7 [I]) ...
    assert cofd.capped_pool(5, [{"group": "teamwork", "value": cofd.teamwork_bonus(many)}]) == 13
    # ... capped when the table applies the cap to teamwork too
    assert cofd.capped_pool(5, [{"group": "teamwork", "value": 8}], uncapped=()) == 10


def test_C15_modifier_group_cap() -> None:
    equip = [{"group": "equipment", "value": 7}]
    assert cofd.capped_pool(4, equip) == 9
    assert cofd.capped_pool(4, equip, cap=None) == 11  # option: any int, or no cap
    assert cofd.capped_pool(4, equip, cap=3) == 7
    mixed = [
        {"group": "equipment", "value": 4},
        {"group": "equipment", "value": 4},
        {"group": "equipment", "value": -2},
        {"group": "wound", "value": -7},
    ]
    assert cofd.capped_pool(6, mixed) == 6 + 5 - 5  # group totals: +6 → +5, -7 → -5
    assert cofd.capped_pool(6, mixed, separate=True) == 6 + 5 - 2 - 5  # [I] alternative
    with pytest.raises(RuleError):
        cofd.capped_pool(4, [{"group": "x", "value": "2"}])
    with pytest.raises(RuleError):
        cofd.capped_pool(4, equip, cap=-1)


def test_C16_retry_under_pressure() -> None:
    assert cofd.retry_penalty(3) == -2
    assert cofd.capped_pool(5, [{"group": "retry", "value": cofd.retry_penalty(3)}]) == 3
    assert cofd.capped_pool(5, [{"group": "retry", "value": cofd.retry_penalty(9)}]) == 0
    assert cofd.retry_penalty(3, enabled=False) == 0  # option off
    assert cofd.retry_penalty(3, extended=True) == 0
    assert cofd.retry_penalty(3, under_pressure=False) == 0
    assert cofd.retry_penalty(1) == 0
    with pytest.raises(RuleError):
        cofd.retry_penalty(0)


def test_C17_intentional_dramatic_failure() -> None:
    failed = r(3, [2, 3, 4])
    converted = cofd.intentional_dramatic_failure(failed)
    assert (converted["outcome"], converted["intentional"]) == ("dramatic_failure", True)
    assert cofd.beats(converted) == 1
    assert failed["outcome"] == "failure"  # the original result is untouched
    with pytest.raises(RuleError, match="only a failure"):
        cofd.intentional_dramatic_failure(r(3, [8, 3, 4]))
    with pytest.raises(RuleError):
        cofd.intentional_dramatic_failure(converted)


def test_nine_again_and_no_again() -> None:
    assert r(2, [9, 8, 9, 2], again=9)["dice"] == [[9, 9, 2], [8]]
    assert r(2, [10, 10], again=None)["successes"] == 2


def test_odds_known_values() -> None:
    assert odds("cofd", {"pool": 8})["outcomes"]["failure"] == pytest.approx(0.7**8)
    assert odds("cofd", {"pool": 1, "rote": True})["outcomes"]["failure"] == pytest.approx(0.49)
    assert odds("cofd", {"pool": 0})["outcomes"] == pytest.approx(
        {"success": 0.1, "failure": 0.8, "dramatic_failure": 0.1}
    )
    assert odds("cofd", {"pool": 0, "rote": True})["outcomes"] == pytest.approx(
        {"success": 0.16, "failure": 0.68, "dramatic_failure": 0.16}
    )
    o = odds("cofd", {"pool": 1, "again": None})
    assert o["outcomes"] == pytest.approx({"success": 0.3, "failure": 0.7})
    assert o["successes"] == pytest.approx({0: 0.7, 1: 0.3})
    # P(k successes from one 10-again die) = 0.3 · 0.1^(k-1) · 0.9 for k ≥ 1 … up to the chain
    one = odds("cofd", {"pool": 1})["successes"]
    assert one[1] == pytest.approx(0.2 + 0.1 * 0.7)


@pytest.mark.parametrize(
    ("check", "key"),
    [
        ({}, "pool"),
        ({"pool": 3.0}, "pool"),
        ({"pool": 3, "again": 7}, "again"),
        ({"pool": 3, "again": 10.0}, "again"),
        ({"pool": 3, "again": True}, "again"),
        ({"pool": 3, "rote": "yes"}, "rote"),
        ({"pool": 3, "exceptional_at": 0}, "exceptional_at"),
        ({"pool": 3, "extra_successes": -1}, "extra_successes"),
        ({"pool": 3, "chance_die_explodes": 1}, "chance_die_explodes"),
        ({"pool": 101}, "101"),
    ],
)
def test_invalid_checks(check: dict, key: str) -> None:
    with pytest.raises(RuleError, match=key):
        resolve("cofd", check, [5, 5, 5])


def test_face_errors() -> None:
    with pytest.raises(RuleError, match="too few faces: got 1, this roll needs at least 2"):
        r(1, [10])
    with pytest.raises(RuleError, match="too many faces: got 4, the roll used 3"):
        r(3, [1, 2, 3, 4])
    with pytest.raises(RuleError, match="face #2 is 0"):
        r(3, [1, 0, 3])
    with pytest.raises(RuleError, match="list of ints"):
        r(3, "123")  # type: ignore[arg-type]
    with pytest.raises(RuleError, match="unknown system"):
        resolve("gurps", {}, [])
    with pytest.raises(RuleError, match="JSON object"):
        resolve("cofd", [("pool", 3)], [1, 2, 3])  # type: ignore[arg-type]
