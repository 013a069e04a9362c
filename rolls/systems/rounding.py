"""Rounding rules of the systems that state one.

* ``nice_damnit`` (§5.5): round half up — ``floor(x + 0.5)``, never Python's ``round()``, which
  rounds half to even; negative values round half away from zero [I]. Movement keeps fractions.
* ``age`` (§4.2 step 9): divisions round **up**, except where a rule (Slowed …) says down.

The other three systems state no rounding rule. Functions accept int, float, Fraction or
Decimal, and return int; pass a Fraction or Decimal when an exact .5 matters (2.675 as a float is
already below 2.675).
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

Number = int | float | Fraction | Decimal

__all__ = ["age_round", "half_up", "nice_damnit_round", "round_down", "round_up"]


def half_up(x: Number) -> int:
    """2.5 → 3, 2.49 → 2, -2.5 → -3 (half away from zero)."""
    if isinstance(x, int):
        return x
    a = abs(x)
    half = (
        Decimal("0.5")
        if isinstance(a, Decimal)
        else Fraction(1, 2)
        if isinstance(a, Fraction)
        else 0.5
    )
    r = math.floor(a + half)
    return r if x >= 0 else -r


def round_up(x: Number) -> int:
    return math.ceil(x)


def round_down(x: Number) -> int:
    return math.floor(x)


def nice_damnit_round(x: Number) -> int:
    return half_up(x)


def age_round(x: Number, down: bool = False) -> int:
    """AGE: up by default (13 / 2 → 7); ``down=True`` for rules such as Slowed (→ 6)."""
    return round_down(x) if down else round_up(x)
