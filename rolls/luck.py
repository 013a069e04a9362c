"""Luck and fairness arithmetic: pure, exact where it can be, no Django.

A roll's *percentile* is its mid-rank under the exact odds of the check as it was rolled:
``P(X < x) + P(X = x) / 2`` (as a fraction), where ``X`` is the number of successes for the pool
systems and the total for 2d10 and AGE. Under fair dice it has mean exactly ½ and variance
``(1 - Σ p³) / 12`` whatever the check, which is what makes percentiles of different checks
comparable and lets a player's mean be tested against ½.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rolls import systems
from rolls.systems import age, cofd, d6pool, nice_damnit, storyteller

SIDES: dict[str, int] = {
    "d6pool": d6pool.SIDES,
    "storyteller": storyteller.SIDES,
    "nice_damnit": nice_damnit.SIDES,
    "age": age.SIDES,
    "cofd": cofd.SIDES,
}
# The statistic a percentile ranks: the engine's result key and the odds' distribution key.
STATISTIC: dict[str, tuple[str, str]] = {
    "d6pool": ("successes", "successes"),
    "storyteller": ("successes", "successes"),
    "cofd": ("successes", "successes"),
    "nice_damnit": ("total", "totals"),
    "age": ("total", "totals"),
}
# Above this many rolls the mean's tail probability uses the normal approximation (with each
# roll's exact variance); at or below it, an exact convolution on a grid of half a point.
EXACT_LIMIT = 16
_GRID = 200  # grid steps per unit of percentile (half a percentage point)


@dataclass(frozen=True)
class Percentile:
    value: float  # mid-rank, 0..1
    variance: float  # of the mid-rank under fair dice
    distribution: tuple[tuple[float, float], ...]  # (mid-rank, probability) over the outcomes


def distribution(system: str, check: Mapping[str, Any]) -> dict[int, float]:
    """The exact distribution of the statistic a percentile ranks, for ``check``."""
    _, key = STATISTIC[system]
    table = systems.odds(system, check).get(key) or {}
    return {int(value): float(p) for value, p in table.items() if p > 0}


def percentile(system: str, check: Mapping[str, Any], result: Mapping[str, Any]) -> Percentile:
    """Where ``result`` falls among the outcomes of ``check`` (RuleError for a malformed check)."""
    observed = int(result.get(STATISTIC[system][0]) or 0)
    return percentile_of(observed, distribution(system, check))


def percentile_of(observed: int, probabilities: Mapping[int, float]) -> Percentile:
    total = sum(probabilities.values()) or 1.0
    below = 0.0
    value = 0.5
    ranks: list[tuple[float, float]] = []
    for outcome in sorted(probabilities):
        p = probabilities[outcome] / total
        mid = below + p / 2
        ranks.append((mid, p))
        if outcome == observed:
            value = mid
        below += p
    if observed not in probabilities:  # faces amended or an impossible value: rank by position
        value = sum(p for outcome, p in probabilities.items() if outcome < observed) / total
    variance = (1 - sum(p**3 for _, p in ranks)) / 12
    return Percentile(value=value, variance=variance, distribution=tuple(ranks))


@dataclass(frozen=True)
class MeanTest:
    mean: float  # the mean percentile, 0..1
    p_value: float  # P(a mean at least this far from ½ under fair dice), two-sided
    method: str  # "exact" (grid convolution) or "normal" (CLT with exact variances)
    rolls: int


def mean_test(percentiles: Sequence[Percentile]) -> MeanTest | None:
    """How surprising the mean of these percentiles is, were the dice fair."""
    n = len(percentiles)
    if n == 0:
        return None
    mean = sum(p.value for p in percentiles) / n
    if n <= EXACT_LIMIT:
        return MeanTest(mean, _exact_two_sided(percentiles, mean), "exact", n)
    sd = math.sqrt(sum(p.variance for p in percentiles)) / n
    if sd == 0:
        return MeanTest(mean, 1.0, "normal", n)
    z = abs(mean - 0.5) / sd
    return MeanTest(mean, min(1.0, math.erfc(z / math.sqrt(2))), "normal", n)


def _exact_two_sided(percentiles: Sequence[Percentile], mean: float) -> float:
    """Exact distribution of the sum of mid-ranks, each rounded to the grid (½ point)."""
    sums: dict[int, float] = {0: 1.0}
    for item in percentiles:
        steps: dict[int, float] = {}
        for mid, p in item.distribution:
            step = round(mid * _GRID)
            steps[step] = steps.get(step, 0.0) + p
        grown: dict[int, float] = {}
        for total, p_total in sums.items():
            for step, p in steps.items():
                key = total + step
                grown[key] = grown.get(key, 0.0) + p_total * p
        sums = grown
    n = len(percentiles)
    centre = n * _GRID / 2
    distance = abs(round(mean * n * _GRID) - centre)
    tail = sum(p for total, p in sums.items() if abs(total - centre) >= distance - 1e-9)
    return min(1.0, tail)


@dataclass(frozen=True)
class ChiSquare:
    sides: int
    counts: tuple[int, ...]  # counts[i] is how often face i + 1 came up
    statistic: float
    dof: int
    p_value: float

    @property
    def total(self) -> int:
        return sum(self.counts)

    @property
    def expected(self) -> float:
        return self.total / self.sides


def chi_square_uniform(faces: Iterable[int], sides: int) -> ChiSquare:
    """Pearson's chi-square test of the faces against a fair ``sides``-sided die."""
    counts = [0] * sides
    for face in faces:
        if 1 <= face <= sides:
            counts[face - 1] += 1
    total = sum(counts)
    if total == 0:
        return ChiSquare(sides, tuple(counts), 0.0, sides - 1, 1.0)
    expected = total / sides
    statistic = sum((count - expected) ** 2 for count in counts) / expected
    dof = sides - 1
    return ChiSquare(sides, tuple(counts), statistic, dof, chi_square_sf(statistic, dof))


def chi_square_sf(x: float, dof: int) -> float:
    """P(χ²(dof) ≥ x): the regularised upper incomplete gamma Q(dof/2, x/2)."""
    if x <= 0:
        return 1.0
    return _gamma_q(dof / 2, x / 2)


def _gamma_q(a: float, x: float) -> float:
    # Numerical Recipes' split: the series converges fast below a + 1, the continued fraction above.
    if x < a + 1:
        term = total = 1.0 / a
        k = a
        for _ in range(1000):
            k += 1
            term *= x / k
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(-x + a * math.log(x) - math.lgamma(a)))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return min(1.0, math.exp(-x + a * math.log(x) - math.lgamma(a)) * h)


def expected_outcomes(system: str, check: Mapping[str, Any]) -> dict[str, float]:
    """The probability of each outcome of ``check`` (the expected count of one roll)."""
    return {name: float(p) for name, p in systems.odds(system, check)["outcomes"].items()}
