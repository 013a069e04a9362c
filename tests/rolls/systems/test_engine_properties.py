"""Hypothesis properties of the engines: determinism, roller = resolver, malformed input,
odds that sum to one and cover every rolled outcome, more dice never hurting."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rolls.systems import SYSTEM_IDS, KeyedDice, RuleError, SeededDice, odds, resolve, roll

# Valid checks of every system.
FORTUNE = st.none() | st.fixed_dictionaries({"die": st.integers(0, 2), "value": st.integers(1, 6)})

CHECKS = {
    "d6pool": st.fixed_dictionaries(
        {"pool": st.integers(-6, 14)},
        optional={"desperate": st.sampled_from(["all_hits", "all_sixes"])},
    ),
    "storyteller": st.fixed_dictionaries(
        {"pool": st.integers(-1, 14)},
        optional={
            "difficulty": st.integers(0, 12),
            "stressful": st.booleans(),
            "free_botch": st.booleans(),
        },
    ),
    "nice_damnit": st.fixed_dictionaries(
        {},
        optional={
            "bonus": st.integers(-12, 30),
            "extra_nice": st.integers(0, 2),
            "extra_nice_enabled": st.booleans(),
        },
    ),
    "age": st.fixed_dictionaries(
        {},
        optional={
            "ability": st.integers(-3, 6),
            "focus": st.booleans(),
            "modifier": st.integers(-3, 3),
            "target": st.none() | st.integers(3, 24),
            "active": st.booleans(),
            "focus_required": st.booleans(),
            "fortune_change": FORTUNE,
        },
    ),
    "cofd": st.fixed_dictionaries(
        {"pool": st.integers(-2, 14)},
        optional={
            "again": st.sampled_from([10, 9, 8, None]),
            "rote": st.booleans(),
            "exceptional_at": st.integers(1, 8),
            "extra_successes": st.integers(0, 3),
            "chance_die_explodes": st.booleans(),
        },
    ),
}

SIDES = {"d6pool": 6, "storyteller": 10, "nice_damnit": 10, "age": 6, "cofd": 10}

system_and_check = st.sampled_from(sorted(CHECKS)).flatmap(
    lambda s: st.tuples(st.just(s), CHECKS[s])
)

seeds = st.integers(0, 2**32)


def test_system_ids() -> None:
    assert SYSTEM_IDS == ("d6pool", "storyteller", "nice_damnit", "age", "cofd")
    assert issubclass(RuleError, ValueError)


@settings(max_examples=300, deadline=None)
@given(system_and_check, seeds)
def test_roller_and_resolver_agree(sc: tuple[str, dict], seed: int) -> None:
    system, check = sc
    faces, result = roll(system, check, SeededDice(seed))
    assert all(isinstance(f, int) and 1 <= f <= SIDES[system] for f in faces)
    assert resolve(system, check, faces) == result
    assert resolve(system, check, list(faces)) == resolve(system, check, tuple(faces))
    assert json.loads(json.dumps(result)) == result  # JSON-serialisable, and lossless
    assert odds(system, check)["outcomes"].get(result["outcome"], 0.0) > 0.0


@settings(max_examples=200, deadline=None)
@given(system_and_check, seeds, st.data())
def test_malformed_faces_raise(sc: tuple[str, dict], seed: int, data: st.DataObject) -> None:
    system, check = sc
    faces, _ = roll(system, check, SeededDice(seed))
    sides = SIDES[system]
    with pytest.raises(RuleError, match="too many"):
        resolve(system, check, [*faces, 1])
    if faces:
        with pytest.raises(RuleError, match="too few"):
            resolve(system, check, faces[:-1])
        i = data.draw(st.integers(0, len(faces) - 1))
        bad = data.draw(
            st.sampled_from([0, -1, sides + 1, 100, float(faces[i]), str(faces[i]), True, None])
        )
        with pytest.raises(RuleError, match=f"face #{i + 1}"):
            resolve(system, check, [*faces[:i], bad, *faces[i + 1 :]])


@settings(max_examples=200, deadline=None)
@given(system_and_check)
def test_odds_are_distributions(sc: tuple[str, dict]) -> None:
    system, check = sc
    o = odds(system, check)
    for name, dist in o.items():
        assert all(p > 0.0 for p in dist.values()), name
        assert sum(dist.values()) == pytest.approx(1.0, abs=1e-9), name
    assert odds(system, check) == o  # cached or not, the same answer
    o["outcomes"].clear()  # callers get copies: the cache cannot be corrupted
    assert odds(system, check)["outcomes"]


@settings(max_examples=60, deadline=None)
@given(CHECKS["storyteller"], seeds)
def test_storyteller_invalid_automatic_raises_on_both_paths(check: dict, seed: int) -> None:
    check = {**check, "automatic": True}
    if check.get("stressful") or check["pool"] < check.get("difficulty", 6):
        with pytest.raises(RuleError):
            roll("storyteller", check, SeededDice(seed))
        with pytest.raises(RuleError):
            odds("storyteller", check)
    else:
        faces, res = roll("storyteller", check, SeededDice(seed))
        assert (faces, res["successes"]) == ([], 1 if check["pool"] > 0 else 0)


def _p(system: str, check: dict, good: tuple[str, ...]) -> float:
    return sum(p for o, p in odds(system, check)["outcomes"].items() if o in good)


@settings(max_examples=150, deadline=None)
@given(CHECKS["d6pool"] | CHECKS["storyteller"] | CHECKS["cofd"], st.integers(-6, 29))
def test_more_dice_never_lower_the_chance_of_success(check: dict, pool: int) -> None:
    good = ("success", "exceptional_success")
    for system in ("d6pool", "storyteller", "cofd"):
        c = {k: v for k, v in check.items() if k in CHECKS_KEYS[system]}
        if system == "storyteller":  # see the difficulty-2 test below
            c["difficulty"] = max(c.get("difficulty", 6), 3)
        more = _p(system, {**c, "pool": pool + 1}, good)
        assert more >= _p(system, {**c, "pool": pool}, good) - 1e-12
    c = {k: v for k, v in check.items() if k in CHECKS_KEYS["cofd"]}
    exc = ("exceptional_success",)
    assert _p("cofd", {**c, "pool": pool + 1}, exc) >= _p("cofd", {**c, "pool": pool}, exc) - 1e-12


def test_storyteller_difficulty_two_is_the_one_exception() -> None:
    # With no neutral face, an even pool can cancel out: 1 die succeeds 90 %, 2 dice 81 %.
    assert _p("storyteller", {"pool": 1, "difficulty": 2}, ("success",)) == pytest.approx(0.9)
    assert _p("storyteller", {"pool": 2, "difficulty": 2}, ("success",)) == pytest.approx(0.81)
    assert _p("storyteller", {"pool": 3, "difficulty": 2}, ("success",)) == pytest.approx(0.972)


CHECKS_KEYS = {
    "d6pool": {"desperate"},
    "storyteller": {"difficulty", "stressful", "free_botch"},
    "cofd": {"again", "rote", "exceptional_at", "extra_successes", "chance_die_explodes"},
}


@settings(max_examples=100, deadline=None)
@given(CHECKS["age"], CHECKS["nice_damnit"])
def test_a_higher_bonus_never_lowers_the_chance_of_success(age: dict, nice: dict) -> None:
    age = {**age, "target": age.get("target") or 11}
    assert _p("age", {**age, "ability": age.get("ability", 0) + 1}, ("success",)) >= (
        _p("age", age, ("success",)) - 1e-12
    )
    up = {**nice, "bonus": nice.get("bonus", 0) + 1}
    for good in (("excellent",), ("average", "excellent")):
        assert _p("nice_damnit", up, good) >= _p("nice_damnit", nice, good) - 1e-12


@settings(max_examples=50, deadline=None)
@given(
    system_and_check,
    st.binary(min_size=1, max_size=32),
    st.text(max_size=20),
    st.integers(0, 10**6),
)
def test_keyed_rolls_are_reproducible(sc: tuple[str, dict], key: bytes, camp: str, seq: int):
    system, check = sc
    first = roll(system, check, KeyedDice(key, camp, seq, camp[::-1]))
    assert roll(system, check, KeyedDice(key, camp, seq, camp[::-1])) == first
    assert resolve(system, check, first[0]) == first[1]


@pytest.mark.parametrize("system", SYSTEM_IDS)
def test_bad_checks_are_rule_errors(system: str) -> None:
    bad: list[object] = [None, [], "pool=3"]
    if system in ("d6pool", "storyteller", "cofd"):
        bad += [{"pool": [3]}, {"pool": 10**6}, {"pool": None}]
    for check in bad:
        with pytest.raises(RuleError):
            resolve(system, check, [])  # type: ignore[arg-type]
        with pytest.raises(RuleError):
            odds(system, check)  # type: ignore[arg-type]
        with pytest.raises(RuleError):
            roll(system, check)  # type: ignore[arg-type]
