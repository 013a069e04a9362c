"""age (seed 003): The Expanse RPG, Adventure Game Engine (RULES §4, contract A.1).

Check: ``ability`` (0), ``focus`` (false; +2), ``modifier`` (0), ``target`` (null → ``rolled``),
``active`` (true), ``focus_required`` (false), ``fortune_change`` (null or
``{"die": 0|1|2, "value": 1..6}``; die 2 is the Drama Die), ``fortune_dice`` (true; option
``age.fortune_dice`` — when false a ``fortune_change`` is refused). Faces: 3 d6 as
``[regular, regular, drama]``, none for ``auto_failure``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from itertools import product
from typing import Any, NamedTuple

from ._core import FaceSource, RuleError, as_mapping, get_bool, get_int

SYSTEM = "age"
SIDES = 6
OUTCOMES = ("success", "failure", "auto_failure", "rolled")
DRAMA = 2  # index of the Drama Die in the faces
_BOUND = 1000  # sanity bound on ability / modifier / target


class Params(NamedTuple):
    ability: int = 0
    focus: bool = False
    modifier: int = 0
    target: int | None = None
    active: bool = True
    focus_required: bool = False
    fortune_change: tuple[int, int] | None = None  # (die, value)


def parse(check: Mapping[str, Any]) -> Params:
    check = as_mapping(SYSTEM, check)
    change = check.get("fortune_change")
    fc = None if change is None else _parse_change(change)
    if fc is not None and not get_bool(SYSTEM, check, "fortune_dice", True):
        raise RuleError(
            f"{SYSTEM}: check key 'fortune_change' is not allowed: Fortune dice are off",
            field="fortune_change",
        )
    target = check.get("target")
    return Params(
        get_int(SYSTEM, check, "ability", 0, lo=-_BOUND, hi=_BOUND),
        get_bool(SYSTEM, check, "focus", False),
        get_int(SYSTEM, check, "modifier", 0, lo=-_BOUND, hi=_BOUND),
        None if target is None else get_int(SYSTEM, check, "target", lo=-_BOUND, hi=_BOUND),
        get_bool(SYSTEM, check, "active", True),
        get_bool(SYSTEM, check, "focus_required", False),
        fc,
    )


def _parse_change(change: object) -> tuple[int, int]:
    if not isinstance(change, Mapping):
        raise RuleError(
            f'{SYSTEM}: check key \'fortune_change\' must be null or {{"die", "value"}}',
            field="fortune_change",
        )
    die = get_int(SYSTEM, change, "die", lo=0, hi=2, where="fortune_change.die")
    value = get_int(SYSTEM, change, "value", lo=1, hi=6, where="fortune_change.value")
    return die, value


def fortune_cost(change: Mapping[str, Any] | tuple[int, int] | None) -> int:
    """§4.2 step 2: setting a die to v costs v Fortune, 2v for the Drama Die."""
    if change is None:
        return 0
    die, value = change if isinstance(change, tuple) else _parse_change(change)
    return value * 2 if die == DRAMA else value


def face_count(p: Params) -> int:
    return 0 if p.focus_required and not p.focus else 3


def bonus(p: Params) -> int:
    return p.ability + (2 if p.focus else 0) + p.modifier


def _read(p: Params, faces: list[int]) -> tuple[str, int, bool, int, int]:
    """(outcome, total, doubles, stunt points generated, stunt points usable) of final faces."""
    total = faces[0] + faces[1] + faces[2] + bonus(p)
    doubles = faces[0] == faces[1] or faces[0] == faces[2] or faces[1] == faces[2]
    # ties succeed (§4.2 step 4)
    outcome = "rolled" if p.target is None else "success" if total >= p.target else "failure"
    generated = faces[DRAMA] if doubles and p.active else 0
    return outcome, total, doubles, generated, generated if outcome != "failure" else 0


def play(p: Params, src: FaceSource) -> tuple[list[int], dict[str, Any]]:
    base = {
        "ability": p.ability,
        "focus": p.focus,
        "bonus": bonus(p),
        "target": p.target,
        "active": p.active,
    }
    if p.focus_required and not p.focus:
        return [], {
            "outcome": "auto_failure",
            "total": None,
            "drama": None,
            "degree": None,
            "doubles": False,
            "stunt_points": 0,
            "stunt_points_generated": 0,
            "fortune_cost": 0,
            "faces": [],
            "rolled": [],
            **base,
        }
    rolled = src.roll_many(6, 3)
    faces = list(rolled)
    if p.fortune_change is not None:
        die, value = p.fortune_change
        faces[die] = value
    outcome, total, doubles, generated, sp = _read(p, faces)
    return rolled, {
        "outcome": outcome,
        "total": total,
        "drama": faces[DRAMA],
        "degree": faces[DRAMA] if outcome == "success" else None,
        "doubles": doubles,
        "stunt_points": sp,
        "stunt_points_generated": generated,
        "fortune_cost": fortune_cost(p.fortune_change),
        "faces": faces,
        "rolled": rolled,
        **base,
    }


def odds(p: Params) -> dict[str, Any]:
    return {k: dict(v) for k, v in _odds(p).items()}


@lru_cache(maxsize=1024)
def _odds(p: Params) -> dict[str, tuple[tuple[Any, float], ...]]:
    if p.focus_required and not p.focus:
        # no roll: there is no total or Drama Die to describe
        return {"outcomes": (("auto_failure", 1.0),), "stunt_points": ((0, 1.0),)}
    # 216 equally likely rolls (36 when a die is fixed by Fortune): small enough to count
    acc: dict[str, dict[Any, float]] = {
        "outcomes": {},
        "totals": {},
        "stunt_points": {},
        "drama": {},
    }
    fixed = p.fortune_change
    rolls = list(product(range(1, 7), repeat=2 if fixed else 3))
    w = 1.0 / len(rolls)
    for r in rolls:
        faces = list(r)
        if fixed:
            faces.insert(fixed[0], fixed[1])
        outcome, total, _doubles, _gen, sp = _read(p, faces)
        for key, val in (
            ("outcomes", outcome),
            ("totals", total),
            ("stunt_points", sp),
            ("drama", faces[DRAMA]),
        ):
            acc[key][val] = acc[key].get(val, 0.0) + w
    return {k: tuple(sorted(v.items())) for k, v in acc.items()}


# --- per-roll rules beyond a single check -------------------------------------------------


def opposed(
    a: Mapping[str, Any], b: Mapping[str, Any], double_tie: str = "reroll"
) -> dict[str, Any]:
    """§4.2 step 8: the higher total wins; on a tie the higher Drama Die; [I] then the higher
    ability + focus; then ``double_tie``: ``reroll`` (default) or ``stalemate``.

    An auto-failed side (no roll) loses to any roll. Returns ``winner`` ("a", "b" or None),
    ``decided_by`` (total, drama, ability, or None) and ``outcome`` (a, b, reroll, stalemate).
    """
    if double_tie not in ("reroll", "stalemate"):
        raise RuleError(f"{SYSTEM}: double_tie must be reroll or stalemate, got {double_tie!r}")
    keys = (
        ("total", lambda r: r["total"]),
        ("drama", lambda r: r["drama"]),
        ("ability", lambda r: r["ability"] + (2 if r["focus"] else 0)),
    )
    a_out = a["outcome"] == "auto_failure"
    b_out = b["outcome"] == "auto_failure"
    if a_out or b_out:
        winner = None if a_out and b_out else "b" if a_out else "a"
        return {
            "winner": winner,
            "decided_by": "auto_failure" if winner else None,
            "outcome": winner or "stalemate",
        }
    for name, key in keys:
        ka, kb = key(a), key(b)
        if ka != kb:
            winner = "a" if ka > kb else "b"
            return {"winner": winner, "decided_by": name, "outcome": winner}
    return {"winner": None, "decided_by": None, "outcome": double_tie}
