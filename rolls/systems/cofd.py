"""cofd (seed 004): Chronicles of Darkness 2e (RULES §3, contract A.1).

Check: ``pool`` (required; the final pool), ``again`` (10; 9, 8 or null for none), ``rote``
(false), ``exceptional_at`` (5), ``extra_successes`` (0), ``chance_die_explodes`` (false).
``pool ≤ 0`` rolls a chance die. Faces, in order: the initial dice; if ``rote``, one reroll per
initial die showing 1-7 (a chance die: 2-7), in die order; then each die's explosion chain, die
by die, followed to its end. Successes: final faces ≥ 8 (a chance die: only a 10).

Decisions where A.1 is silent: a chance die explodes only on a 10 (9-/8-again never apply to it,
§3.4), only if ``chance_die_explodes`` and ``again`` is not null, and its explosion dice are
ordinary dice (8+ succeeds, 10 explodes). Extra successes count toward ``exceptional_at``, on a
chance die too.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from . import _dist
from ._core import MAX_DICE, FaceSource, RuleError, as_mapping, check_dice_count, get_bool, get_int

SYSTEM = "cofd"
SIDES = 10
OUTCOMES = ("exceptional_success", "success", "failure", "dramatic_failure")
AGAIN_VALUES = (10, 9, 8, None)  # null: nothing explodes


class Params(NamedTuple):
    pool: int
    again: int | None = 10
    rote: bool = False
    exceptional_at: int = 5
    extra_successes: int = 0
    chance_die_explodes: bool = False


def parse(check: Mapping[str, Any]) -> Params:
    # The roller calls this on every roll: accept the common well-typed check in one pass, and
    # leave the messages (and int subclasses) to the careful path.
    if type(check) is dict:
        get = check.get
        pool, again, rote = get("pool"), get("again", 10), get("rote", False)
        exc, extra = get("exceptional_at", 5), get("extra_successes", 0)
        cde = get("chance_die_explodes", False)
        if (
            type(pool) is int
            and pool <= MAX_DICE
            and (again is None or (type(again) is int and 8 <= again <= 10))
            and (rote is False or rote is True)
            and (cde is False or cde is True)
            and type(exc) is int
            and 1 <= exc <= MAX_DICE
            and type(extra) is int
            and 0 <= extra <= MAX_DICE
        ):
            return Params(pool, again, rote, exc, extra, cde)
    return _parse(check)


def _parse(check: Mapping[str, Any]) -> Params:
    check = as_mapping(SYSTEM, check)
    pool = get_int(SYSTEM, check, "pool")
    check_dice_count(SYSTEM, pool)
    again = check.get("again", 10)
    if again is not None and (type(again) is not int or again not in (8, 9, 10)):
        raise RuleError(
            f"{SYSTEM}: check key 'again' must be 10, 9, 8 or null, got {again!r}", field="again"
        )
    return Params(
        pool,
        again,
        get_bool(SYSTEM, check, "rote", False),
        get_int(SYSTEM, check, "exceptional_at", 5, lo=1, hi=MAX_DICE),
        get_int(SYSTEM, check, "extra_successes", 0, lo=0, hi=MAX_DICE),
        get_bool(SYSTEM, check, "chance_die_explodes", False),
    )


def face_count(p: Params) -> None:
    return None  # rote rerolls and explosions depend on the faces


def _outcome(successes: int, exceptional_at: int) -> str:
    if successes >= exceptional_at:
        return "exceptional_success"
    return "success" if successes else "failure"


def play(p: Params, src: FaceSource) -> tuple[list[int], dict[str, Any]]:
    """``dice`` holds one chain per die in draw order: its initial face, its rote reroll when
    its index is listed in ``rerolled``, then its explosions."""
    pool, again, rote, exceptional_at, extra, _ = p
    if pool <= 0:
        return _play_chance(p, src.roll)
    draw = src.roll
    first = src.roll_many(10, pool)
    dice = [[f] for f in first]
    if rote:
        # one reroll per initial die showing 1-7, in die order, each replacing its die
        rerolled = [i for i, f in enumerate(first) if f < 8]
        finals = list(first)
        for i in rerolled:
            finals[i] = r = draw(10)
            dice[i].append(r)
        faces = first + [finals[i] for i in rerolled]
    else:
        rerolled = []
        finals = faces = first
    n8, n9, n10 = finals.count(8), finals.count(9), finals.count(10)
    successes = n8 + n9 + n10
    if again is not None and (n10 if again == 10 else n9 + n10 if again == 9 else successes):
        boom: list[int] = []
        for i, f in enumerate(finals):
            if f >= again:
                x = draw(10)
                chain = [x]
                while x >= again:
                    x = draw(10)
                    chain.append(x)
                boom += chain
                dice[i] += chain
        faces = faces + boom
        # every explosion face but a chain's last is ≥ again ≥ 8
        successes += len(boom) - sum(1 for x in boom if x < 8)
    if successes:
        successes += extra
    return faces, {
        "outcome": _outcome(successes, exceptional_at),
        "successes": successes,
        "chance_die": False,
        "pool": pool,
        "dice": dice,
        "rerolled": rerolled,
    }


def _play_chance(p: Params, draw: Any) -> tuple[list[int], dict[str, Any]]:
    faces = [draw(10)]
    rerolled: list[int] = []
    if p.rote and 2 <= faces[0] <= 7:  # a 1 is never rerolled; 8-9 are not "1-7" (§3.4)
        faces.append(draw(10))
        rerolled = [0]
    final = faces[-1]
    boom: list[int] = []
    if final == 10 and p.chance_die_explodes and p.again is not None:
        x = draw(10)
        boom.append(x)
        while x == 10:  # 9-again and 8-again never apply to a chance die
            x = draw(10)
            boom.append(x)
        faces += boom
    successes = 0
    if final == 10:
        successes = 1 + sum(1 for x in boom if x >= 8) + p.extra_successes
    outcome = "dramatic_failure" if final == 1 else _outcome(successes, p.exceptional_at)
    return faces, {
        "outcome": outcome,
        "successes": successes,
        "chance_die": True,
        "pool": p.pool,
        "dice": [list(faces)],
        "rerolled": rerolled,
    }


# --- odds ---------------------------------------------------------------------------------
#
# One ordinary die's successes have the generating function (a0 + a1·z) / (1 - e·z): a0, a1 for
# the die (after its rote reroll) failing or succeeding without exploding, and a geometric factor
# for the explosion chain (each explosion continues with probability e). Without rote,
# a0 = 0.7 and a1 = q (faces 8..again-1); with rote, the 1-7s are replaced by a fresh die:
# a0 = 0.49, a1 = 0.21 + q. So n dice give Binomial(n, a1/(1 - e)) + NegativeBinomial(n, e)
# successes: one convolution of two short series, O(n²) at worst, with the chain's tail cut below
# 1e-13 of mass.


def _die_law(again: int | None, rote: bool) -> tuple[float, float]:
    """(p1, e): P(base success) given no explosion, and the probability a chain continues."""
    e = 0.0 if again is None else (11 - again) / 10
    q = 0.3 - e
    a1 = 0.21 + q if rote else q
    return a1 / (1.0 - e), e


def raw_successes(n: int, again: int | None, rote: bool) -> list[float]:
    """P(k successes) from n ordinary dice, before extra successes (index k)."""
    p1, e = _die_law(again, rote)
    return _dist.convolve(_dist.binomial(n, p1), _dist.negative_binomial(n, e))


def odds(p: Params) -> dict[str, Any]:
    outcomes, successes = _odds(p)
    return {"outcomes": dict(outcomes), "successes": dict(successes)}


@lru_cache(maxsize=1024)
def _odds(p: Params) -> tuple[tuple[tuple[str, float], ...], tuple[tuple[int, float], ...]]:
    explodes = p.again is not None
    if p.pool <= 0:
        p10 = 0.1 + (0.06 if p.rote else 0.0)
        p1 = p10  # a 1 on the first face, or on the reroll of a 2-7
        if p.chance_die_explodes and explodes:
            raw = [0.0, *(p10 * x for x in raw_successes(1, 10, False))]
        else:
            raw = [0.0, p10]
        fail0 = 1.0 - p10 - p1  # failures that are not dramatic
        dramatic = p1
        tail = p10 - sum(raw)
    else:
        raw = raw_successes(p.pool, p.again, p.rote)
        fail0, dramatic = raw[0], 0.0
        tail = max(1.0 - sum(raw), 0.0) if explodes else 0.0
    out = dict.fromkeys(OUTCOMES, 0.0)
    out["failure"] = fail0
    out["dramatic_failure"] = dramatic
    succ = {0: fail0 + dramatic}
    for k in range(1, len(raw)):
        s = k + p.extra_successes
        succ[s] = raw[k]
        out[_outcome(s, p.exceptional_at)] += raw[k]
    if tail > 0.0:  # the cut-off end of the explosion chains is all exceptional
        out[_outcome(len(raw) + p.extra_successes, p.exceptional_at)] += tail
    return (
        tuple((k, v) for k, v in out.items() if v > 0.0),
        tuple((k, v) for k, v in succ.items() if v > 0.0),
    )


# --- per-roll rules beyond a single check -------------------------------------------------


def capped_groups(
    modifiers: Sequence[Mapping[str, Any]] = (),
    cap: int | None = 5,
    *,
    uncapped: Collection[str] = ("teamwork",),
    separate: bool = False,
) -> list[dict[str, Any]]:
    """§3.2: each modifier group's own total (``raw``) and what the cap lets through (``applied``).

    One entry per group in first-seen order: ``{"group", "raw", "applied", "capped"}``; ``cap`` is
    the cap that bit (None when it did not). ``uncapped`` groups are never capped (§3.7 [I]:
    teamwork); ``separate=True`` is the [I] alternative of capping a group's bonuses and its
    penalties separately. This is what a truthful breakdown shows: "retry -8, capped at -5".
    """
    if cap is not None and (not isinstance(cap, int) or cap < 0):
        raise RuleError(f"{SYSTEM}: modifier cap must be an int ≥ 0 or None, got {cap!r}")
    plus: dict[str, int] = {}
    minus: dict[str, int] = {}
    order: dict[str, None] = {}
    for m in modifiers:
        group, value = m.get("group"), m.get("value")
        if not isinstance(group, str) or not isinstance(value, int) or isinstance(value, bool):
            raise RuleError(f"{SYSTEM}: a modifier is {{'group': str, 'value': int}}, got {m!r}")
        side = plus if value >= 0 else minus
        side[group] = side.get(group, 0) + value
        order[group] = None

    def clamp(group: str, v: int) -> int:
        return v if cap is None or group in uncapped else max(-cap, min(cap, v))

    out = []
    for g in order:
        up, down = plus.get(g, 0), minus.get(g, 0)
        applied = clamp(g, up) + clamp(g, down) if separate else clamp(g, up + down)
        raw = up + down
        capped = applied != raw or (separate and (clamp(g, up) != up or clamp(g, down) != down))
        out.append(
            {
                "group": g,
                "raw": raw,
                "applied": applied,
                "capped": capped,
                "cap": cap if capped else None,
            }
        )
    return out


def capped_pool(
    base: int,
    modifiers: Sequence[Mapping[str, Any]] = (),
    cap: int | None = 5,
    *,
    uncapped: Collection[str] = ("teamwork",),
    separate: bool = False,
) -> int:
    """§3.2 / option ``cofd.modifier_cap``: base traits plus modifiers, each group capped at ±cap.

    ``modifiers`` are ``{"group": str, "value": int}``. Bonuses are added before penalties (the
    sum is the same; it matters only for how the sheet shows it). ``cap=None`` lifts the cap.
    ``uncapped`` groups are never capped (§3.7 [I]: teamwork); retry penalties are capped like
    any group (§3.6 [I]). ``separate=True`` is the [I] alternative: cap a group's bonuses and its
    penalties separately. :func:`capped_groups` says what each group contributed.
    """
    groups = capped_groups(modifiers, cap, uncapped=uncapped, separate=separate)
    return base + sum(g["applied"] for g in groups)


# RULES 2.11 (CofD 2e core): what 1 Willpower buys on a CofD roll.
WILLPOWER_DICE = 3  # +3 dice to a roll
WILLPOWER_RESISTANCE = 2  # or +2 to a resistance trait (Stamina, Resolve, Composure, Defense)


def willpower_bonus(*, resistance: bool = False) -> int:
    """1 Willpower: +3 dice to a roll, or +2 to a resistance trait that is not rolled."""
    return WILLPOWER_RESISTANCE if resistance else WILLPOWER_DICE


def teamwork_bonus(helpers: Sequence[Mapping[str, Any]]) -> int:
    """§3.7: +1 die per helper success, -4 per helper dramatic failure (they stack).

    Add it to the primary's pool as the ``teamwork`` modifier group.
    """
    total = 0
    for h in helpers:
        if h["outcome"] == "dramatic_failure":
            total -= 4
        else:
            total += int(h["successes"])
    return total


def retry_penalty(
    attempt: int, *, under_pressure: bool = True, extended: bool = False, enabled: bool = True
) -> int:
    """§3.6 / option ``cofd.retry_penalty``: attempt k under pressure has -(k - 1) dice.

    Never for extended actions, nor without time pressure. Add it as the ``retry`` group.
    """
    if not isinstance(attempt, int) or isinstance(attempt, bool) or attempt < 1:
        raise RuleError(f"{SYSTEM}: attempt must be an int ≥ 1, got {attempt!r}")
    if not enabled or not under_pressure or extended:
        return 0
    return -(attempt - 1)


def intentional_dramatic_failure(result: Mapping[str, Any]) -> dict[str, Any]:
    """§3.5: the player turns a failure into a dramatic failure (and gains a Beat).

    Only a plain ``failure`` can be converted; whether the once-per-chapter allowance (option
    ``cofd.intentional_dramatic_failure``) is still unused is the server's call.
    """
    if not may_become_dramatic_failure(result):
        raise RuleError(
            f"{SYSTEM}: only a failure can become a dramatic failure, not {result.get('outcome')!r}"
        )
    return {**result, "outcome": "dramatic_failure", "intentional": True}


def may_become_dramatic_failure(result: Mapping[str, Any]) -> bool:
    """Whether `intentional_dramatic_failure` converts this result (a plain failure)."""
    return result.get("outcome") == "failure"


def beats(result: Mapping[str, Any], beat_on_dramatic_failure: bool = False) -> int:
    """Beats a result earns: 1 for an intentional dramatic failure; 1 for a natural one only
    with option ``cofd.beat_on_dramatic_failure`` (default false, A.2)."""
    if result.get("outcome") != "dramatic_failure":
        return 0
    return 1 if result.get("intentional") or beat_on_dramatic_failure else 0
