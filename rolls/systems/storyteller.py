"""storyteller (seed 001): old World of Darkness, Revised (RULES §2, contract A.1).

Check: ``pool`` (required), ``difficulty`` (6), ``automatic`` (false), ``stressful`` (false),
``free_botch`` (false: set by the server when this roller's free botch — option
``storyteller.free_botch`` — is still unused; a botch then becomes a failure and the result says
``free_botch_consumed``), ``willpower`` (false: 1 Willpower spent on the roll, §2.11 — one
automatic success that 1s cannot cancel, so the roll cannot fail or botch). Faces: ``pool`` d10,
none for ``impossible`` or ``automatic``.

Decisions where §2.11 is silent: the 1s cancel the rolled successes only, and the Willpower success
is added after them (``successes = max(hits - ones, 0) + 1``); Willpower cannot make an impossible
roll (pool ≤ 0) possible, and it is not spent on an automatic success (no dice are rolled).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from . import _dist
from ._core import FaceSource, RuleError, as_mapping, check_dice_count, get_bool, get_int
from .errors import gettext_noop as _

SYSTEM = "storyteller"
SIDES = 10
OUTCOMES = ("success", "failure", "botch", "impossible")
# §2.5: degree labels for 1, 2, 3, 4 and 5+ net successes.
DEGREES = ("marginal", "moderate", "complete", "exceptional", "phenomenal")
RETRY_MODES = ("seed", "linear", "off")


class Params(NamedTuple):
    pool: int
    difficulty: int = 6
    automatic: bool = False
    stressful: bool = False
    free_botch: bool = False
    willpower: bool = False


def target_number(difficulty: int) -> int:
    """§2.4: the face that succeeds, clamped to 2..10 (a 10 always succeeds, a 1 never)."""
    return min(max(difficulty, 2), 10)


def degree(successes: int) -> str | None:
    return DEGREES[min(successes, 5) - 1] if successes >= 1 else None


def parse(check: Mapping[str, Any]) -> Params:
    check = as_mapping(SYSTEM, check)
    p = Params(
        get_int(SYSTEM, check, "pool"),
        get_int(SYSTEM, check, "difficulty", 6),
        get_bool(SYSTEM, check, "automatic", False),
        get_bool(SYSTEM, check, "stressful", False),
        get_bool(SYSTEM, check, "free_botch", False),
        get_bool(SYSTEM, check, "willpower", False),
    )
    if p.willpower and p.automatic:
        raise RuleError(
            _(
                "{system}: check key 'willpower': an automatic success rolls no dice; "
                "spend Willpower on a roll"
            ),
            field="willpower",
            params={"system": SYSTEM},
        )
    if p.willpower and p.pool <= 0:
        raise RuleError(
            _(
                "{system}: check key 'willpower': a pool of {pool} cannot be attempted, "
                "and Willpower does not change that"
            ),
            field="willpower",
            params={"system": SYSTEM, "pool": p.pool},
        )
    if p.automatic:
        # §2.6: never under stress, and only when the pool reaches the (effective) difficulty.
        if p.stressful:
            raise RuleError(
                f"{SYSTEM}: check key 'automatic': not allowed on a stressful check",
                field="automatic",
            )
        if p.pool < p.difficulty:
            raise RuleError(
                f"{SYSTEM}: check key 'automatic': an automatic success needs pool ≥ "
                f"difficulty ({p.pool} < {p.difficulty}); roll instead",
                field="automatic",
            )
    check_dice_count(SYSTEM, p.pool)
    return p


def face_count(p: Params) -> int:
    return 0 if p.pool <= 0 or p.automatic else p.pool


def play(p: Params, src: FaceSource) -> tuple[list[int], dict[str, Any]]:
    pool, difficulty, automatic, _stressful, free_botch, willpower = p
    target = target_number(difficulty)
    faces: list[int] = []
    consumed = False
    if pool <= 0:
        outcome, successes, hits, ones = "impossible", 0, 0, 0
    elif automatic:
        outcome, successes, hits, ones = "success", 1, 0, 0
    else:
        faces = src.roll_many(10, pool)
        hits = sum(1 for f in faces if f >= target)
        ones = faces.count(1)
        net = hits - ones
        if willpower:  # §2.11: the Willpower success comes after the 1s have cancelled
            outcome, successes = "success", max(net, 0) + 1
        elif net >= 1:
            outcome, successes = "success", net
        elif hits == 0 and ones:
            outcome, successes = "botch", 0
            if free_botch:  # §2.7: the free botch turns it into a plain failure
                outcome, consumed = "failure", True
        else:
            outcome, successes = "failure", 0
    return faces, {
        "outcome": outcome,
        "successes": successes,
        "hits": hits,
        "ones": ones,
        "target": target,
        "degree": degree(successes),
        "botch_ones": ones if outcome == "botch" else 0,
        "free_botch_consumed": consumed,
        "automatic": automatic and pool > 0,
        "willpower": willpower,
        "pool": pool,
        "dice": faces,
    }


def odds(p: Params) -> dict[str, Any]:
    outcomes, successes = _odds(
        p.pool, target_number(p.difficulty), p.automatic, p.free_botch, p.willpower
    )
    return {"outcomes": dict(outcomes), "successes": dict(successes)}


@lru_cache(maxsize=1024)
def _odds(
    pool: int, target: int, automatic: bool, free_botch: bool, willpower: bool = False
) -> tuple[tuple[tuple[str, float], ...], tuple[tuple[int, float], ...]]:
    if pool <= 0:
        return (("impossible", 1.0),), ((0, 1.0),)
    if automatic:
        return (("success", 1.0),), ((1, 1.0),)
    n = pool
    none, some = _dist.net_split(n, (11 - target) / 10, 0.1)  # index k + n
    if willpower:  # every roll succeeds: net ≤ 0 gives 1, net k ≥ 1 gives k + 1
        lost = sum(none) + sum(some[: n + 1])
        shifted = {k - n + 1: q for k, q in enumerate(some) if k > n and q > 0.0}
        return (("success", 1.0),), ((1, lost), *shifted.items())
    win = {k - n: q for k, q in enumerate(some) if k > n and q > 0.0}
    p_win = sum(win.values())
    botch = sum(none[:n])
    fail = none[n] + sum(some[: n + 1])
    if free_botch:
        fail, botch = fail + botch, 0.0
    out = {"success": p_win, "failure": fail, "botch": botch}
    return (
        tuple((k, v) for k, v in out.items() if v > 0.0),
        ((0, 1.0 - p_win), *win.items()),
    )


# --- per-roll rules beyond a single check -------------------------------------------------


def multiple_action_pools(base_pools: Sequence[int]) -> list[int]:
    """§2.9: n declared actions; action j (1-based) rolls ``base_j - n - (j - 1)`` dice.

    A pool ≤ 0 cannot be attempted (``resolve`` reports it as ``impossible``).
    """
    n = len(base_pools)
    return [b - n - j for j, b in enumerate(base_pools)]


def retry_increase(attempt: int, mode: str = "seed") -> int:
    """§2.8 / option ``storyteller.retry_escalation``: the difficulty added on attempt k (1-based).

    ``seed``: k(k - 1)/2 (+0, +1, +3, +6 …); ``linear``: k - 1; ``off``: 0.
    """
    if not isinstance(attempt, int) or isinstance(attempt, bool) or attempt < 1:
        raise RuleError(f"{SYSTEM}: attempt must be an int ≥ 1, got {attempt!r}")
    if mode == "seed":
        return attempt * (attempt - 1) // 2
    if mode == "linear":
        return attempt - 1
    if mode == "off":
        return 0
    raise RuleError(f"{SYSTEM}: retry escalation must be one of {list(RETRY_MODES)}, got {mode!r}")


def retry_difficulty(base: int, attempt: int, mode: str = "seed", exempt: bool = False) -> int:
    """The difficulty of attempt k, clamped like the target number (B10: seed 6, 7, 9, 10).

    ``exempt``: the GM marked the check as not escalating (a missed shot, an unnoticed tail).
    """
    return target_number(base + (0 if exempt else retry_increase(attempt, mode)))


def retry_explanation(
    base: int, attempt: int, mode: str = "seed", exempt: bool = False
) -> dict[str, Any]:
    """Why attempt k is at its difficulty, truthfully (§2.8, §2.4): the rule's raise and the cap.

    ``raise`` is what the escalation rule adds (attempt 4, seed: +6); ``difficulty`` is what is
    rolled against (clamped to 10: ``capped``); ``uncapped`` is base + raise, the difficulty an
    automatic success must reach. Nothing about a retry is a term of the dice pool.
    """
    increase = 0 if exempt else retry_increase(attempt, mode)
    difficulty = target_number(base + increase)
    return {
        "attempt": attempt,
        "base_difficulty": base,
        "raise": increase,
        "uncapped": base + increase,
        "difficulty": difficulty,
        "capped": difficulty != base + increase,
    }


def resisted(a: int | Mapping[str, Any], b: int | Mapping[str, Any]) -> dict[str, Any]:
    """§2.10: each side's own N (hits - ones, or an int); the higher wins and keeps
    ``N_w - max(N_l, 0)`` net successes; a tie gives nobody anything.

    A winner needs at least one net success. [I] A side that botched loses (``botched`` lists it).
    """
    na, nb = _net(a), _net(b)
    botched = [
        s for s, r in (("a", a), ("b", b)) if isinstance(r, Mapping) and r.get("outcome") == "botch"
    ]
    if na > nb:
        winner, net = "a", na - max(nb, 0)
    elif nb > na:
        winner, net = "b", nb - max(na, 0)
    else:
        winner, net = None, 0
    if net < 1 or winner in botched:
        winner, net = None, 0
    return {
        "winner": winner,
        "net_successes": net,
        "tie": na == nb,
        "net": {"a": na, "b": nb},
        "botched": botched,
    }


def _net(side: int | Mapping[str, Any]) -> int:
    if isinstance(side, Mapping):
        if side.get("outcome") == "impossible":
            return 0
        if side.get("automatic") or side.get("willpower"):
            return int(side["successes"])  # an automatic or a Willpower success: no 1s cancel it
        return int(side["hits"]) - int(side["ones"])
    if isinstance(side, int) and not isinstance(side, bool):
        return side
    raise RuleError(f"{SYSTEM}: a resisted side is a result or an int, got {side!r}")
