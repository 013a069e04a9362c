"""Small exact-probability helpers shared by the ``odds`` functions (floats, no numpy)."""

from __future__ import annotations

from math import comb

# Explosion chains are infinite; their tail is cut once less than this much mass remains.
TAIL = 1e-13


def net_split(n: int, p_plus: float, p_minus: float) -> tuple[list[float], list[float]]:
    """P(#plus - #minus = k) over n dice that each add +1, -1 or 0, split by whether any die
    came up +1: ``(no_plus, some_plus)``, both indexed by k + n (k = -n..n).

    Each die convolves with a three-point law, O(n²) in all. Keeping the two parts apart
    (instead of subtracting) leaves impossible cells exactly 0.0, so "can it happen?" stays
    answerable.
    """
    p0 = 1.0 - p_plus - p_minus
    none = [1.0]  # paths on which no die has shown +1 yet
    some = [0.0]
    for _ in range(n):
        lo = [*some, 0.0, 0.0]
        mid = [0.0, *some, 0.0]
        hi = [0.0, 0.0, *some]
        n_lo = [*none, 0.0, 0.0]
        n_mid = [0.0, *none, 0.0]
        n_hi = [0.0, 0.0, *none]
        some = [
            p_minus * a + p0 * b + p_plus * (c + d)
            for a, b, c, d in zip(lo, mid, hi, n_hi, strict=True)
        ]
        none = [p_minus * a + p0 * b for a, b in zip(n_lo, n_mid, strict=True)]
    return none, some


def binomial(n: int, p: float) -> list[float]:
    q = 1.0 - p
    return [comb(n, j) * p**j * q ** (n - j) for j in range(n + 1)]


def negative_binomial(n: int, e: float, tail: float = TAIL) -> list[float]:
    """P(K = k) for the number of successes before the n-th failure, failure prob 1 - e.

    This is the law of the total extra successes from n explosion chains that each continue
    with probability e; the series is cut once less than ``tail`` of the mass is left.
    """
    if n == 0 or e == 0.0:
        return [1.0]
    term = (1.0 - e) ** n
    out = [term]
    total = term
    k = 0
    mode = int((n - 1) * e / (1.0 - e)) + 1
    while k <= mode or (term > 1e-18 and 1.0 - total > tail):
        term *= e * (n + k) / (k + 1)
        k += 1
        out.append(term)
        total += term
    return out


def convolve(a: list[float], b: list[float]) -> list[float]:
    if len(a) < len(b):
        a, b = b, a
    la = len(a)
    out = [0.0] * (la + len(b) - 1)
    for j, y in enumerate(b):
        if y:
            # one slice assignment per row keeps the inner loop in a list comprehension
            out[j : j + la] = [o + x * y for o, x in zip(out[j : j + la], a, strict=True)]
    return out
