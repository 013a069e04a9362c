"""Willpower (RULES 2.11) and the truthful retry and cap explanations (issue #12, item 12)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rolls.systems import RuleError, SeededDice, cofd, odds, resolve, roll, storyteller

ST_CHECK = st.fixed_dictionaries(
    {"pool": st.integers(1, 14)},
    optional={
        "difficulty": st.integers(2, 10),
        "stressful": st.booleans(),
        "free_botch": st.booleans(),
    },
)


@settings(max_examples=300, deadline=None)
@given(ST_CHECK, st.integers(0, 2**32))
def test_storyteller_willpower_adds_one_success_that_ones_cannot_cancel(check, seed):
    plain_faces, plain = roll("storyteller", check, SeededDice(seed))
    spent = resolve("storyteller", {**check, "willpower": True}, plain_faces)
    assert spent["outcome"] == "success", "a Willpower roll can neither fail nor botch"
    assert spent["successes"] == max(plain["hits"] - plain["ones"], 0) + 1
    assert spent["willpower"] is True and spent["free_botch_consumed"] is False
    assert spent["hits"] == plain["hits"] and spent["ones"] == plain["ones"]


@settings(max_examples=200, deadline=None)
@given(ST_CHECK)
def test_storyteller_willpower_odds_shift_the_net_successes(check):
    plain = odds("storyteller", check)["successes"]
    spent = odds("storyteller", {**check, "willpower": True})
    assert spent["outcomes"] == {"success": 1.0}
    assert sum(spent["successes"].values()) == pytest.approx(1.0, abs=1e-9)
    # net ≤ 0 (failure, botch, cancelled) gives 1 success; net k ≥ 1 gives k + 1
    assert spent["successes"][1] == pytest.approx(plain.get(0, 0.0), abs=1e-12)
    for k, p in plain.items():
        if k >= 1:
            assert spent["successes"][k + 1] == pytest.approx(p, abs=1e-12)


def test_storyteller_willpower_odds_match_an_exhaustive_count():
    from itertools import product

    counts: dict[int, int] = {}
    for faces in product(range(1, 11), repeat=3):
        s = resolve("storyteller", {"pool": 3, "difficulty": 7, "willpower": True}, faces)
        counts[s["successes"]] = counts.get(s["successes"], 0) + 1
    exact = odds("storyteller", {"pool": 3, "difficulty": 7, "willpower": True})["successes"]
    assert exact == pytest.approx({k: v / 1000 for k, v in counts.items()}, abs=1e-12)


def test_storyteller_willpower_examples():
    # B5 with Willpower: 9, 1, 1, 8, 1 at difficulty 8 is S=2, O=3 → still 1 success
    b5 = resolve("storyteller", {"pool": 5, "difficulty": 8, "willpower": True}, [9, 1, 1, 8, 1])
    assert (b5["outcome"], b5["successes"]) == ("success", 1)
    # B1 with Willpower: 3 rolled successes + 1
    b1 = resolve("storyteller", {"pool": 5, "willpower": True}, [3, 3, 8, 7, 10])
    assert (b1["successes"], b1["degree"]) == (4, "exceptional")
    # a botch is impossible: 1, 3, 5 → 1 success (and no free botch is used up)
    b6 = resolve("storyteller", {"pool": 3, "free_botch": True, "willpower": True}, [1, 3, 5])
    assert (b6["outcome"], b6["free_botch_consumed"]) == ("success", False)


@pytest.mark.parametrize(
    ("check", "field"),
    [
        ({"pool": 6, "automatic": True, "willpower": True}, "willpower"),
        ({"pool": 0, "willpower": True}, "willpower"),
        ({"pool": 3, "willpower": 1}, "willpower"),
    ],
)
def test_storyteller_willpower_refusals_name_the_field(check, field):
    with pytest.raises(RuleError) as error:
        resolve("storyteller", check, [])
    assert error.value.field == field


def test_willpower_wins_a_resisted_roll_its_ones_would_have_lost():
    a = resolve("storyteller", {"pool": 3, "willpower": True}, [7, 1, 1])  # net -1 → 1
    b = resolve("storyteller", {"pool": 2}, [2, 3])
    assert storyteller.resisted(a, b)["winner"] == "a"


def test_cofd_willpower_is_three_dice_or_two_on_a_resistance_trait():
    assert cofd.willpower_bonus() == 3
    assert cofd.willpower_bonus(resistance=True) == 2


# --- item 12: the rule's value and the cap, never the clamped value as if it were the rule ----


@pytest.mark.parametrize(
    ("mode", "attempt", "raise_", "difficulty", "capped"),
    [
        ("seed", 4, 6, 10, True),  # "attempt 4: +6, difficulty capped at 10"
        ("seed", 3, 3, 9, False),
        ("linear", 4, 3, 9, False),
        ("linear", 6, 5, 10, True),
        ("off", 4, 0, 6, False),
    ],
)
def test_storyteller_retry_explanation_keeps_the_rule_and_the_cap_apart(
    mode, attempt, raise_, difficulty, capped
):
    why = storyteller.retry_explanation(6, attempt, mode)
    assert (why["raise"], why["difficulty"], why["capped"]) == (raise_, difficulty, capped)
    assert why["uncapped"] == 6 + raise_
    assert why["difficulty"] == storyteller.retry_difficulty(6, attempt, mode)


def test_storyteller_retry_explanation_of_a_not_escalating_check():
    why = storyteller.retry_explanation(6, 3, "seed", exempt=True)
    assert (why["raise"], why["difficulty"], why["capped"]) == (0, 6, False)


def test_cofd_capped_groups_show_the_rule_value_and_what_the_cap_let_through():
    groups = cofd.capped_groups(
        [
            {"group": "equipment", "value": 3},
            {"group": "retry", "value": -8},
            {"group": "equipment", "value": 4},
            {"group": "teamwork", "value": 9},
            {"group": "wounds", "value": -2},
        ],
        cap=5,
    )
    assert groups == [
        {"group": "equipment", "raw": 7, "applied": 5, "capped": True, "cap": 5},
        {"group": "retry", "raw": -8, "applied": -5, "capped": True, "cap": 5},
        {"group": "teamwork", "raw": 9, "applied": 9, "capped": False, "cap": None},
        {"group": "wounds", "raw": -2, "applied": -2, "capped": False, "cap": None},
    ]


MODS = st.lists(
    st.fixed_dictionaries(
        {
            "group": st.sampled_from(["equipment", "retry", "teamwork", "wounds"]),
            "value": st.integers(-12, 12),
        }
    ),
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10), MODS, st.none() | st.integers(0, 8), st.booleans())
def test_cofd_capped_groups_sum_to_the_capped_pool(base, mods, cap, separate):
    groups = cofd.capped_groups(mods, cap, separate=separate)
    assert base + sum(g["applied"] for g in groups) == cofd.capped_pool(
        base, mods, cap, separate=separate
    )
    for g in groups:
        assert g["capped"] == (g["cap"] is not None)
        if cap is not None and g["group"] != "teamwork":
            assert abs(g["applied"]) <= (2 * cap if separate else cap)
        if not g["capped"]:
            assert g["applied"] == g["raw"]
