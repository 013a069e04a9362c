"""The roller's empirical frequencies match odds(): chi-square goodness of fit, fixed seeds."""

from collections import Counter
from collections.abc import Hashable, Mapping

import pytest
from scipy.stats import chisquare

from rolls.systems import KeyedDice, SeededDice, SystemDice, odds, roll

N = 20_000
ALPHA = 1e-3  # with fixed seeds the test is deterministic; this is the bar it had to clear


def fit(observed: Counter, probs: Mapping[Hashable, float], n: int) -> float:
    """p-value of ``observed`` against ``probs``; bins expecting < 5 are pooled."""
    assert set(observed) <= set(probs), f"observed impossible values {set(observed) - set(probs)}"
    keys = sorted(probs, key=lambda k: (str(type(k)), k))
    obs, exp = [], []
    pool_o = pool_e = 0.0
    for k in keys:
        e = probs[k] * n
        if e < 5:
            pool_o += observed.get(k, 0)
            pool_e += e
        else:
            obs.append(observed.get(k, 0))
            exp.append(e)
    if pool_e >= 5:
        obs.append(pool_o)
        exp.append(pool_e)
    elif exp:
        i = exp.index(max(exp))
        obs[i] += pool_o
        exp[i] += pool_e
    if len(exp) < 2:
        return 1.0
    scale = sum(obs) / sum(exp)  # the truncated explosion tail leaves ~1e-13 unaccounted for
    return float(chisquare(obs, [e * scale for e in exp]).pvalue)


CASES = [
    ("d6pool", {"pool": 3}, "successes"),
    ("d6pool", {"pool": -1}, "successes"),
    ("d6pool", {"pool": 0, "desperate": "all_sixes"}, "successes"),
    ("storyteller", {"pool": 6, "difficulty": 7}, "successes"),
    ("storyteller", {"pool": 4, "difficulty": 10, "free_botch": True}, "successes"),
    ("nice_damnit", {"bonus": 3, "extra_nice": 2}, "totals"),
    ("age", {"ability": 2, "focus": True, "target": 14}, "totals"),
    ("age", {"target": 11, "fortune_change": {"die": 2, "value": 5}}, "stunt_points"),
    ("cofd", {"pool": 8}, "successes"),
    ("cofd", {"pool": 6, "again": 8, "rote": True}, "successes"),
    ("cofd", {"pool": 3, "again": 9, "extra_successes": 1, "exceptional_at": 3}, "successes"),
    ("cofd", {"pool": 0}, "successes"),
    ("cofd", {"pool": 0, "rote": True}, "successes"),
    ("cofd", {"pool": -2, "chance_die_explodes": True, "rote": True}, "successes"),
]


def _value(result: dict, key: str) -> Hashable:
    return result[{"totals": "total"}.get(key, key)]


@pytest.mark.parametrize(
    ("system", "check", "dist"), CASES, ids=[f"{s}-{i}" for i, (s, _, _) in enumerate(CASES)]
)
def test_roller_matches_odds(system: str, check: dict, dist: str) -> None:
    dice = SeededDice(f"chi2-{system}-{sorted(check.items())}")
    results = [roll(system, check, dice)[1] for _ in range(N)]
    want = odds(system, check)
    outcomes = Counter(r["outcome"] for r in results)
    values = Counter(_value(r, dist) for r in results)
    assert fit(outcomes, want["outcomes"], N) > ALPHA
    assert fit(values, want[dist], N) > ALPHA


@pytest.mark.parametrize("sides", [6, 10])
def test_sources_are_uniform(sides: int) -> None:
    uniform = {f: 1 / sides for f in range(1, sides + 1)}
    for dice, alpha in (
        (SeededDice(7), ALPHA),
        (KeyedDice(b"k", "camp", 1), ALPHA),
        (SystemDice(), 1e-6),
    ):  # the OS source is not seeded: a looser bar
        n = 3000 if isinstance(dice, KeyedDice) else 30_000
        faces = Counter(dice.roll(sides) for _ in range(n))
        assert fit(faces, uniform, n) > alpha, type(dice).__name__


def test_default_roller_uses_the_os_source() -> None:
    outcomes = Counter(roll("cofd", {"pool": 0})[1]["outcome"] for _ in range(5000))
    assert fit(outcomes, odds("cofd", {"pool": 0})["outcomes"], 5000) > 1e-6
