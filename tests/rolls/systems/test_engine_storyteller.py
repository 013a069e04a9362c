"""storyteller: every worked example of RULES §2.12 (B1-B12), the per-roll rules, validation."""

import pytest

from rolls.systems import RuleError, odds, resolve, storyteller


def r(pool: int, faces: list[int], **kw: object) -> dict:
    return resolve("storyteller", {"pool": pool, **kw}, faces)


def test_B1_three_successes_is_complete() -> None:
    res = r(5, [3, 3, 8, 7, 10])
    assert (res["outcome"], res["successes"], res["degree"], res["target"]) == (
        "success",
        3,
        "complete",
        6,
    )


def test_B2_veronica_may_take_the_automatic_success() -> None:
    res = r(2 + 4, [], automatic=True)
    assert (res["outcome"], res["successes"], res["automatic"], res["dice"]) == (
        "success",
        1,
        True,
        [],
    )
    assert odds("storyteller", {"pool": 6, "automatic": True})["outcomes"] == {"success": 1.0}
    # she may roll instead, and then the roll stands (it may botch)
    assert r(6, [1, 2, 2, 3, 4, 5])["outcome"] == "botch"


def test_B3_nosferatu_hall_three_actions() -> None:
    assert storyteller.multiple_action_pools([3 + 4, 3 + 3, 3 + 3]) == [4, 2, 1]


def test_B4_four_actions_only_the_first_is_possible() -> None:
    pools = storyteller.multiple_action_pools([5, 5, 5, 5])
    assert pools == [1, 0, -1, -2]
    assert [r(p, [6] if p > 0 else [])["outcome"] for p in pools] == [
        "success",
        "impossible",
        "impossible",
        "impossible",
    ]
    assert odds("storyteller", {"pool": 0})["outcomes"] == {"impossible": 1.0}


def test_B5_cancelled_successes_are_a_failure_not_a_botch() -> None:
    res = r(5, [9, 1, 1, 8, 1], difficulty=8)
    assert (res["outcome"], res["hits"], res["ones"], res["successes"]) == ("failure", 2, 3, 0)


def test_B6_botch_and_the_free_botch() -> None:
    res = r(3, [1, 3, 5])
    assert (res["outcome"], res["botch_ones"], res["free_botch_consumed"]) == ("botch", 1, False)
    free = r(3, [1, 3, 5], free_botch=True)
    assert (free["outcome"], free["free_botch_consumed"]) == ("failure", True)
    # the server clears the flag once used: the next botch stays a botch
    assert r(3, [1, 3, 5], free_botch=False)["outcome"] == "botch"
    # a free botch is not spent on rolls that did not botch
    assert r(3, [6, 3, 5], free_botch=True)["free_botch_consumed"] is False


def test_B6_free_botch_moves_the_botch_mass_into_failure() -> None:
    plain = odds("storyteller", {"pool": 3})["outcomes"]
    free = odds("storyteller", {"pool": 3, "free_botch": True})["outcomes"]
    assert "botch" not in free
    assert free["failure"] == pytest.approx(plain["failure"] + plain["botch"])
    assert free["success"] == pytest.approx(plain["success"])


def test_B7_and_B8_difficulty_ten() -> None:
    assert r(2, [10, 1], difficulty=10)["outcome"] == "failure"
    res = r(3, [10, 10, 1], difficulty=10)
    assert (res["outcome"], res["successes"]) == ("success", 1)


def test_B9_difficulty_two() -> None:
    res = r(2, [1, 2], difficulty=2)
    assert (res["outcome"], res["hits"], res["ones"]) == ("failure", 1, 1)


def test_B10_retry_escalation_modes() -> None:
    diff = storyteller.retry_difficulty
    assert [diff(6, k, "linear") for k in (1, 2, 3, 4)] == [6, 7, 8, 9]
    assert [diff(6, k, "seed") for k in (1, 2, 3, 4)] == [6, 7, 9, 10]
    assert [diff(6, k) for k in (1, 2, 3, 4)] == [6, 7, 9, 10]  # A.2 default is seed
    assert [diff(6, k, "off") for k in (1, 2, 3, 4)] == [6, 6, 6, 6]
    assert [diff(6, k, exempt=True) for k in (1, 2, 3)] == [6, 6, 6]
    assert [storyteller.retry_increase(k) for k in (1, 2, 3, 4, 5)] == [0, 1, 3, 6, 10]
    with pytest.raises(RuleError):
        diff(6, 0)
    with pytest.raises(RuleError):
        diff(6, 2, "triangular")


def test_B11_resisted_net_successes() -> None:
    a = r(5, [6, 7, 8, 9, 2])
    b = r(4, [6, 6, 7, 3])
    res = storyteller.resisted(a, b)
    assert (res["winner"], res["net_successes"], res["net"]) == ("a", 1, {"a": 4, "b": 3})
    assert storyteller.resisted(4, 3)["net_successes"] == 1


def test_resisted_ties_negatives_and_botches() -> None:
    tie = storyteller.resisted(3, 3)
    assert (tie["winner"], tie["net_successes"], tie["tie"]) == (None, 0, True)
    assert storyteller.resisted(2, -1) == {
        "winner": "a",
        "net_successes": 2,
        "tie": False,
        "net": {"a": 2, "b": -1},
        "botched": [],
    }
    botch = r(3, [1, 2, 3])
    res = storyteller.resisted(botch, r(3, [6, 2, 3]))
    assert (res["winner"], res["botched"]) == ("b", ["a"])
    assert storyteller.resisted(0, -2)["winner"] is None  # nobody achieved anything
    with pytest.raises(RuleError):
        storyteller.resisted("3", 2)  # type: ignore[arg-type]


def test_B12_automatic_success_needs_pool_at_least_difficulty() -> None:
    with pytest.raises(RuleError, match="pool ≥ difficulty"):
        r(5, [], automatic=True)
    with pytest.raises(RuleError, match="stressful"):
        r(6, [], automatic=True, stressful=True)
    assert r(5, [6, 6, 2, 2, 2])["outcome"] == "success"


def test_degrees_and_target_clamp() -> None:
    assert [storyteller.degree(n) for n in (0, 1, 2, 3, 4, 5, 9)] == [
        None,
        "marginal",
        "moderate",
        "complete",
        "exceptional",
        "phenomenal",
        "phenomenal",
    ]
    assert r(1, [10], difficulty=12)["target"] == 10
    assert r(1, [10], difficulty=12)["outcome"] == "success"  # a 10 always succeeds
    assert r(1, [2], difficulty=-3)["target"] == 2
    assert r(6, [6] * 6)["degree"] == "phenomenal"


@pytest.mark.parametrize(
    ("check", "key"),
    [
        ({}, "pool"),
        ({"pool": "3"}, "pool"),
        ({"pool": 3, "difficulty": 6.5}, "difficulty"),
        ({"pool": 3, "automatic": 1}, "automatic"),
        ({"pool": 3, "stressful": "no"}, "stressful"),
        ({"pool": 3, "free_botch": None}, "free_botch"),
        ({"pool": 101}, "101"),
    ],
)
def test_invalid_checks(check: dict, key: str) -> None:
    with pytest.raises(RuleError, match=key):
        resolve("storyteller", check, [])


def test_face_errors() -> None:
    with pytest.raises(RuleError, match="expected 3 d10"):
        r(3, [1, 2])
    with pytest.raises(RuleError, match="expected 0"):
        r(0, [1])
    with pytest.raises(RuleError, match=r"1\.\.10"):
        r(2, [0, 5])
