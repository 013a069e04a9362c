"""d6pool (seed 000): d6 success pool with «не туда!» (RULES §1, contract A.1).

Check: ``pool`` (required int, may be ≤ 0), ``desperate`` (``"all_hits"`` | ``"all_sixes"``,
option ``d6pool.desperate``). ``pool`` d6 in normal mode, ``2 - pool`` d6 in desperate mode.
Faces 4-6 are hits (S), 1s are ones (O), N = S - O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from . import _dist
from ._core import FaceSource, RuleError, as_mapping, check_dice_count, get_choice, get_int

SYSTEM = "d6pool"
SIDES = 6
OUTCOMES = ("success", "wrong_way", "failure", "critical_failure")
DESPERATE_MODES = ("all_hits", "all_sixes")
# §1.2: the GM's difficulty scale, in dice.
DIFFICULTY = {"trivial": 0, "easy": -2, "hard": -4, "very_hard": -6, "unreal": -8}


class Params(NamedTuple):
    pool: int
    desperate: str = "all_hits"


def parse(check: Mapping[str, Any]) -> Params:
    check = as_mapping(SYSTEM, check)
    pool = get_int(SYSTEM, check, "pool")
    check_dice_count(SYSTEM, dice_count(pool))
    return Params(pool, get_choice(SYSTEM, check, "desperate", "all_hits", DESPERATE_MODES))


def dice_count(pool: int) -> int:
    """§1.3: ``pool`` dice, or ``2 - pool`` when the pool is below one die."""
    return pool if pool >= 1 else 2 - pool


def face_count(p: Params) -> int:
    return dice_count(p.pool)


def play(p: Params, src: FaceSource) -> tuple[list[int], dict[str, Any]]:
    pool, desperate = p
    faces = src.roll_many(6, dice_count(pool))
    hits = len(faces) - faces.count(1) - faces.count(2) - faces.count(3)
    ones = faces.count(1)
    if pool >= 1:
        net = hits - ones
        if net >= 1:
            outcome = "success"
        elif net == 0 and hits:  # §1.5 [I]: wrong way needs at least one hit
            outcome = "wrong_way"
        elif hits == 0 and ones:
            outcome = "critical_failure"
        else:
            outcome = "failure"
        successes = net if net >= 1 else 0
    else:
        # §1.6, alternative A (or B with desperate="all_sixes"): at most one success.
        need = hits if desperate == "all_hits" else faces.count(6)
        if need == len(faces):
            outcome, successes = "success", 1
        else:
            outcome = "critical_failure" if hits == 0 and ones else "failure"
            successes = 0
    return faces, {
        "outcome": outcome,
        "successes": successes,
        "hits": hits,
        "ones": ones,
        "severity": ones if outcome == "critical_failure" else 0,
        "pool": pool,
        "mode": "normal" if pool >= 1 else "desperate",
        "dice": faces,
    }


def odds(p: Params) -> dict[str, Any]:
    outcomes, successes = _odds(p)
    return {"outcomes": dict(outcomes), "successes": dict(successes)}


@lru_cache(maxsize=1024)
def _odds(p: Params) -> tuple[tuple[tuple[str, float], ...], tuple[tuple[int, float], ...]]:
    n = dice_count(p.pool)
    if p.pool >= 1:
        none, some = _dist.net_split(n, 0.5, 1 / 6)  # index k + n
        win = {k - n: q for k, q in enumerate(some) if k > n and q > 0.0}
        p_win = sum(win.values())
        wrong = some[n]
        crit = sum(none[:n])
        fail = none[n] + sum(some[:n])  # all blanks, or hits outweighed by ones
        succ = {0: 1.0 - p_win, **win}
    else:
        p_win = 0.5**n if p.desperate == "all_hits" else (1 / 6) ** n
        wrong = 0.0
        crit = 0.5**n - (1 / 3) ** n  # no hit and at least one 1 (n ≥ 2 here)
        fail = 1.0 - p_win - crit
        succ = {0: 1.0 - p_win, 1: p_win}
    out = {"success": p_win, "wrong_way": wrong, "failure": fail, "critical_failure": crit}
    return (
        tuple((k, v) for k, v in out.items() if v > 0.0),
        tuple(succ.items()),
    )


# --- per-roll rules beyond a single check -------------------------------------------------


def adrenaline_dice(physical: bool, life_or_health_at_stake: bool, dice: int = 2) -> int:
    """§1.9 [I] placeholder (option ``d6pool.adrenaline_dice``): bonus dice for the surge."""
    return dice if physical and life_or_health_at_stake else 0


def score(result: Mapping[str, Any]) -> int:
    """Rank of a roll in a contest (§1.8): successes on a success, else min(N, 0)."""
    if result["outcome"] == "success":
        return int(result["successes"])
    return min(int(result["hits"]) - int(result["ones"]), 0)


def defender_pool(attacker: Mapping[str, Any], base_pool: int) -> int | None:
    """§1.7: the defender's pool, reduced by the attacker's successes; None if no roll is needed.

    A failed attack needs no defence; a wrong-way attack is resisted at no penalty.
    """
    if attacker["outcome"] not in ("success", "wrong_way"):
        return None
    return base_pool - int(attacker["successes"])


def opposed(attacker: Mapping[str, Any], defender: Mapping[str, Any] | None) -> dict[str, Any]:
    """§1.7 [I]: read an opposed action from both results.

    ``outcome``: ``no_effect`` (the attack failed), ``defended`` (defender succeeded),
    ``partial_defence`` (defender rolled wrong way: the GM reduces or redirects the effect) or
    ``effect`` (the attack lands with ``successes``); ``defender_mishap`` flags a defender's
    critical failure.
    """
    if attacker["outcome"] not in ("success", "wrong_way"):
        return {"outcome": "no_effect", "successes": 0, "defender_mishap": False}
    if defender is None:
        raise RuleError("d6pool: an attack that landed needs the defender's roll")
    d = defender["outcome"]
    if d == "success":
        outcome = "defended"
    elif d == "wrong_way":
        outcome = "partial_defence"
    else:
        outcome = "effect"
    return {
        "outcome": outcome,
        "successes": int(attacker["successes"]) if outcome == "effect" else 0,
        "attacker": attacker["outcome"],
        "defender": d,
        "defender_mishap": d == "critical_failure",
    }


def contest(results: Sequence[Mapping[str, Any]], tie: str = "reroll") -> dict[str, Any]:
    """§1.8 [I]: highest score wins; margin = top minus runner-up.

    ``tie``: ``reroll`` (default: the tied participants roll again), ``draw``, or ``pool``
    (the larger pool among the tied wins; a remaining tie is a reroll).
    """
    if not results:
        raise RuleError("d6pool: a contest needs at least one roll")
    if tie not in ("reroll", "draw", "pool"):
        raise RuleError(f"d6pool: contest tie rule must be reroll, draw or pool, got {tie!r}")
    scores = [score(r) for r in results]
    return _rank(scores, [int(r["pool"]) for r in results], tie)


def _rank(scores: list[int], pools: list[int], tie: str) -> dict[str, Any]:
    best = max(scores)
    top = [i for i, s in enumerate(scores) if s == best]
    rest = [s for s in scores if s != best]
    margin = best - max(rest) if rest else 0
    if len(top) > 1 and tie == "pool":
        big = max(pools[i] for i in top)
        top = [i for i in top if pools[i] == big]
    if len(top) == 1:
        return {
            "outcome": "winner",
            "winner": top[0],
            "tied": [],
            "margin": margin,
            "scores": scores,
        }
    return {
        "outcome": "draw" if tie == "draw" else "reroll",
        "winner": None,
        "tied": top,
        "margin": 0,
        "scores": scores,
    }


def long_contest(
    rounds: Sequence[Sequence[Mapping[str, Any]]], target: int | None = None
) -> dict[str, Any]:
    """§1.8 [I] long contest: each round's score floored at 0 is summed per participant.

    With ``target``, the first round in which someone reaches it ends the contest (the higher
    total wins; equal totals → reroll); without, the highest total after all rounds wins.
    ``outcome`` is ``winner``, ``reroll`` or ``undecided`` (target not reached yet).
    """
    if not rounds:
        raise RuleError("d6pool: a long contest needs at least one round")
    totals = [0] * len(rounds[0])
    for n, rnd in enumerate(rounds, 1):
        if len(rnd) != len(totals):
            raise RuleError("d6pool: every round needs one roll per participant")
        totals = [t + max(score(r), 0) for t, r in zip(totals, rnd, strict=True)]
        if target is not None and max(totals) >= target:
            return {**_rank(totals, totals, "reroll"), "totals": totals, "rounds": n}
    if target is not None:
        return {
            "outcome": "undecided",
            "winner": None,
            "tied": [],
            "margin": 0,
            "scores": totals,
            "totals": totals,
            "rounds": len(rounds),
        }
    return {**_rank(totals, totals, "reroll"), "totals": totals, "rounds": len(rounds)}
