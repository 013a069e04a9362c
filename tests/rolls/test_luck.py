"""Percentiles against brute-force enumeration, the mean test, and chi-square by hand."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chi2

from rolls import luck
from rolls.systems import age, cofd, d6pool, nice_damnit, storyteller

MODULES = {
    "d6pool": d6pool,
    "storyteller": storyteller,
    "nice_damnit": nice_damnit,
    "age": age,
    "cofd": cofd,
}


class _NeedMore(Exception):
    pass


class _Prefix:
    """A face source that hands out a fixed prefix and asks for more when it runs out."""

    def __init__(self, faces: list[int]) -> None:
        self.faces, self.pos, self.sides = faces, 0, 0

    def roll(self, sides: int) -> int:
        if self.pos >= len(self.faces):
            self.sides = sides
            raise _NeedMore
        face = self.faces[self.pos]
        self.pos += 1
        return face

    def roll_many(self, sides: int, n: int) -> list[int]:
        return [self.roll(sides) for _ in range(n)]


def brute_force(
    system: str, check: Mapping[str, Any], floor: float = 1e-8
) -> tuple[dict[int, float], float]:
    """The statistic's distribution by walking every face sequence, and the probability mass
    left unexplored (explosion chains are followed while their probability is above ``floor``)."""
    mod = MODULES[system]
    params = mod.parse(check)
    key = luck.STATISTIC[system][0]
    found: dict[int, float] = {}
    dropped = 0.0

    def walk(prefix: list[int], p: float) -> None:
        source = _Prefix(prefix)
        try:
            _, result = mod.play(params, source)
        except _NeedMore:
            nonlocal dropped
            if p < floor:
                dropped += p
                return
            for face in range(1, source.sides + 1):
                walk([*prefix, face], p / source.sides)
            return
        value = int(result[key] or 0)
        found[value] = found.get(value, 0.0) + p

    walk([], 1.0)
    return found, dropped


CASES = [
    ("d6pool", {"pool": 3}),
    ("d6pool", {"pool": 2, "mode": "desperate"}),
    ("storyteller", {"pool": 3, "difficulty": 6}),
    ("storyteller", {"pool": 2, "difficulty": 8, "specialty": True}),
    ("cofd", {"pool": 2}),
    ("cofd", {"pool": 1, "again": 8}),
    ("cofd", {"pool": 2, "rote": True, "again": None}),
    ("cofd", {"pool": 0}),
    ("nice_damnit", {"bonus": 1}),
    ("age", {"ability": 2, "focus": True, "target": 11}),
]


@pytest.mark.parametrize(("system", "check"), CASES)
def test_distribution_matches_brute_force(system: str, check: dict[str, Any]) -> None:
    try:
        exact = luck.distribution(system, check)
    except Exception as error:  # a key the engine doesn't know: the case itself is wrong
        pytest.fail(f"{system} {check}: {error}")
    enumerated, dropped = brute_force(system, check)
    assert set(enumerated) <= set(exact)
    for value, p in exact.items():
        assert (
            enumerated.get(value, 0.0) - 1e-12 <= p <= enumerated.get(value, 0.0) + dropped + 1e-12
        )
    assert dropped < 1e-3


@pytest.mark.parametrize(("system", "check"), CASES)
def test_percentile_is_the_mid_rank_of_the_enumeration(system: str, check: dict[str, Any]) -> None:
    enumerated, dropped = brute_force(system, check)
    key = luck.STATISTIC[system][0]
    for observed in enumerated:
        below = sum(p for value, p in enumerated.items() if value < observed)
        expected = below + enumerated[observed] / 2
        got = luck.percentile(system, check, {key: observed})
        assert got.value == pytest.approx(expected, abs=dropped + 1e-9)
    # under fair dice the mid-rank averages exactly one half
    mean = sum(mid * p for mid, p in luck.percentile(system, check, {key: 0}).distribution)
    assert mean == pytest.approx(0.5, abs=1e-9)


def test_a_maximal_roll_ranks_high_and_a_minimal_one_low() -> None:
    top = luck.percentile("storyteller", {"pool": 5, "difficulty": 6}, {"successes": 5})
    bottom = luck.percentile("storyteller", {"pool": 5, "difficulty": 6}, {"successes": 0})
    assert top.value > 0.95
    assert bottom.value < 0.2


def test_chi_square_by_hand() -> None:
    # 60 rolls of a d6: counts 5, 8, 9, 8, 10, 20; expected 10 each.
    faces = [1] * 5 + [2] * 8 + [3] * 9 + [4] * 8 + [5] * 10 + [6] * 20
    random.Random(1).shuffle(faces)
    test = luck.chi_square_uniform(faces, 6)
    assert test.counts == (5, 8, 9, 8, 10, 20)
    # (25 + 4 + 1 + 4 + 0 + 100) / 10 = 13.4 on 5 degrees of freedom
    assert test.statistic == pytest.approx(13.4)
    assert test.dof == 5
    assert test.p_value == pytest.approx(0.01989, abs=5e-5)


@given(st.floats(0.01, 200), st.integers(1, 30))
@settings(max_examples=200, deadline=None)
def test_chi_square_tail_matches_scipy(x: float, dof: int) -> None:
    assert luck.chi_square_sf(x, dof) == pytest.approx(chi2.sf(x, dof), rel=1e-7, abs=1e-12)


def test_fair_faces_pass_and_loaded_faces_fail() -> None:
    rng = random.Random(7)
    fair = [rng.randint(1, 10) for _ in range(5000)]
    loaded = [10 if rng.random() < 0.2 else rng.randint(1, 10) for _ in range(5000)]
    assert luck.chi_square_uniform(fair, 10).p_value > 0.001
    assert luck.chi_square_uniform(loaded, 10).p_value < 1e-6


def _exhaustive_two_sided(items: list[luck.Percentile], mean: float) -> float:
    n = len(items)
    tail = 0.0
    for combo in itertools.product(*(item.distribution for item in items)):
        total = sum(mid for mid, _ in combo) / n
        if abs(total - 0.5) >= abs(mean - 0.5) - 1e-9:
            tail += math.prod(p for _, p in combo)
    return tail


def test_mean_test_is_exact_for_few_rolls() -> None:
    items = [
        luck.percentile("cofd", {"pool": 2}, {"successes": 2}),
        luck.percentile("storyteller", {"pool": 2, "difficulty": 6}, {"successes": 2}),
        luck.percentile("nice_damnit", {"bonus": 0}, {"total": 19}),
    ]
    test = luck.mean_test(items)
    assert test is not None and test.method == "exact"
    # the grid rounds mid-ranks to half a point; the exhaustive sum does not
    assert test.p_value == pytest.approx(_exhaustive_two_sided(items, test.mean), abs=0.02)
    assert test.p_value < 0.2


def test_mean_test_uses_the_normal_approximation_for_many_rolls() -> None:
    rng = random.Random(3)
    items = []
    for _ in range(200):
        faces = [rng.randint(1, 10) for _ in range(5)]
        successes = sum(1 for face in faces if face >= 8)
        items.append(luck.percentile("cofd", {"pool": 5, "again": None}, {"successes": successes}))
    test = luck.mean_test(items)
    assert test is not None and test.method == "normal"
    assert 0.4 < test.mean < 0.6
    assert test.p_value > 0.001
    assert luck.mean_test([]) is None
