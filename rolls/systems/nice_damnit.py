"""nice_damnit (seed 002): 2d10 + Area + Skill with Nice!/Damnit! chips (RULES §5, A.1).

Check: ``bonus`` (0; Area level + skill bonus + modifiers), ``extra_nice`` (0; 0..2, the post-roll
option of §5.3, clamped to what the band and the cap of 9 allow), ``extra_nice_enabled`` (true;
option ``nice_damnit.extra_nice``: when false no extra Nice! is ever granted). Faces: 2 d10.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from ._core import FaceSource, as_mapping, get_bool, get_int

SYSTEM = "nice_damnit"
SIDES = 10
OUTCOMES = ("bad", "average", "excellent")
CHIP_CAP = 9
MAX_EXTRA = 2
# §5.2: the average band (13..17) is a table; the other bands are formulas.
_AVERAGE = {13: (1, 3), 14: (1, 2), 15: (2, 2), 16: (2, 1), 17: (3, 1)}


class Params(NamedTuple):
    bonus: int = 0
    extra_nice: int = 0
    extra_nice_enabled: bool = True


def parse(check: Mapping[str, Any]) -> Params:
    check = as_mapping(SYSTEM, check)
    return Params(
        get_int(SYSTEM, check, "bonus", 0, lo=-1000, hi=1000),
        get_int(SYSTEM, check, "extra_nice", 0, lo=0, hi=MAX_EXTRA),
        get_bool(SYSTEM, check, "extra_nice_enabled", True),
    )


def face_count(p: Params) -> int:
    return 2


def band(total: int) -> str:
    """§5.2: 1-12 bad, 13-17 average, 18+ excellent (totals below 1 are bad too)."""
    return "bad" if total <= 12 else "average" if total <= 17 else "excellent"


def chips(total: int) -> tuple[int, int]:
    """§5.2: (Nice!, Damnit!) for a total, before any extra Nice!."""
    if total <= 12:
        return 0, min(CHIP_CAP, 15 - total)
    if total >= 18:
        return min(CHIP_CAP, total - 14), 0
    return _AVERAGE[total]


def extra_nice_allowed(total: int, enabled: bool = True) -> int:
    """§5.3: how many extra Nice! (each with a Damnit!) the total allows: 0 in the bad band,
    else min(2, 9 - N, 9 - D)."""
    if not enabled or total <= 12:
        return 0
    nice, damnit = chips(total)
    return min(MAX_EXTRA, CHIP_CAP - nice, CHIP_CAP - damnit)


def take_extra(total: int, requested: int, enabled: bool = True) -> tuple[int, int, int]:
    """(Nice!, Damnit!, extra taken) after asking for ``requested`` extra Nice!."""
    nice, damnit = chips(total)
    k = min(requested, extra_nice_allowed(total, enabled))
    return nice + k, damnit + k, k


def play(p: Params, src: FaceSource) -> tuple[list[int], dict[str, Any]]:
    faces = src.roll_many(10, 2)
    total = faces[0] + faces[1] + p.bonus
    nice, damnit, k = take_extra(total, p.extra_nice, p.extra_nice_enabled)
    return faces, {
        "outcome": band(total),
        "total": total,
        "nice": nice,
        "damnit": damnit,
        "extra_nice": k,
        "extra_nice_requested": p.extra_nice,
        "dice": faces,
    }


def odds(p: Params) -> dict[str, Any]:
    outcomes, totals, nice, damnit = _odds(p)
    return {
        "outcomes": dict(outcomes),
        "totals": dict(totals),
        "nice": dict(nice),
        "damnit": dict(damnit),
    }


@lru_cache(maxsize=1024)
def _odds(p: Params) -> tuple[tuple[tuple[Any, float], ...], ...]:
    # 2d10 sums: 1, 2, …, 10, …, 2, 1 ways out of 100.
    totals = {s + p.bonus: (10 - abs(s - 11)) / 100 for s in range(2, 21)}
    outcomes: dict[str, float] = {}
    nice: dict[int, float] = {}
    damnit: dict[int, float] = {}
    for t, q in totals.items():
        b = band(t)
        outcomes[b] = outcomes.get(b, 0.0) + q
        n, d, _ = take_extra(t, p.extra_nice, p.extra_nice_enabled)
        nice[n] = nice.get(n, 0.0) + q
        damnit[d] = damnit.get(d, 0.0) + q
    order = {o: i for i, o in enumerate(OUTCOMES)}
    return (
        tuple(sorted(outcomes.items(), key=lambda kv: order[kv[0]])),
        tuple(totals.items()),
        tuple(sorted(nice.items())),
        tuple(sorted(damnit.items())),
    )
