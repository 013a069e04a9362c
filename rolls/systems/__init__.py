"""The rules engines of the five dice systems (RULES.md Part A.1): pure, deterministic, no Django.

Public surface::

    SYSTEM_IDS == ("d6pool", "storyteller", "nice_damnit", "age", "cofd")
    resolve(system_id, check, faces) -> dict      # faces in → result out; RuleError if malformed
    roll(system_id, check, dice=None) -> (faces, result)   # the roller; default SystemDice()
    odds(system_id, check) -> {"outcomes": {outcome: p}, ...}   # exact, by dynamic programming
    RuleError(ValueError)   # defined in rolls.systems.errors; ``field`` names the bad input
    DieSource, SystemDice, SeededDice, KeyedDice, face_source  # dice (see rolls.systems.dice)
    roll_key, key_commitment                    # per-roll keys and their commitments

One code path: each system's rules are written against a face source (``roll(sides) -> int``,
plus ``roll_many(sides, n)`` for a pool's dice in a row). ``resolve`` feeds them from the
caller's list (checking every face's range and the count), ``roll`` from a dice source, so a
logged ``(check, faces)`` always re-resolves to the same result.

``odds`` lists only outcomes that can occur (probability > 0), plus per system: ``successes``
({n: p}; d6pool, storyteller, cofd — the result's ``successes`` key), ``totals``, ``nice`` and
``damnit`` (nice_damnit), ``totals``, ``stunt_points`` and ``drama`` (age). Results are cached
per check.

Per-roll rules beyond a single check (pure functions; state stays with the server):

* ``d6pool``: ``dice_count(pool)``, ``defender_pool(attacker, base_pool)``,
  ``opposed(attacker, defender)``, ``contest(results, tie="reroll"|"draw"|"pool")``,
  ``long_contest(rounds, target=None)``, ``score(result)``,
  ``adrenaline_dice(physical, life_or_health_at_stake, dice=2)``, ``DIFFICULTY``.
* ``storyteller``: ``multiple_action_pools(base_pools)``, ``resisted(a, b)``,
  ``retry_increase(attempt, mode)``, ``retry_difficulty(base, attempt, mode="seed"|"linear"|"off",
  exempt=False)``, ``target_number(difficulty)``, ``degree(successes)``; the free botch is the
  check key ``free_botch``.
* ``cofd``: ``capped_pool(base, modifiers, cap=5, uncapped=("teamwork",), separate=False)``,
  ``teamwork_bonus(helpers)``, ``retry_penalty(attempt, under_pressure=True, extended=False,
  enabled=True)``, ``intentional_dramatic_failure(result)``, ``beats(result,
  beat_on_dramatic_failure=False)``.
* ``age``: ``opposed(a, b, double_tie="reroll"|"stalemate")``, ``fortune_cost(change)`` (the
  balance is checked by the service, `rolls.checks.followups.spend_fortune`).
* ``nice_damnit``: ``chips(total)``, ``band(total)``, ``extra_nice_allowed(total, enabled=True)``,
  ``take_extra(total, requested, enabled=True)``.
* ``rounding``: ``half_up`` / ``nice_damnit_round`` (§5.5), ``age_round(x, down=False)`` (§4.2),
  ``round_up``, ``round_down``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from . import age, cofd, d6pool, nice_damnit, storyteller
from ._core import MAX_DICE, MAX_FACES, FaceFeed, RuleError
from .dice import (
    DieSource,
    KeyedDice,
    SeededDice,
    SystemDice,
    face_source,
    key_commitment,
    roll_key,
)
from .errors import gettext_noop as _

__all__ = [
    "MAX_DICE",
    "MAX_FACES",
    "SYSTEM_IDS",
    "DieSource",
    "KeyedDice",
    "RuleError",
    "SeededDice",
    "SystemDice",
    "face_source",
    "key_commitment",
    "odds",
    "resolve",
    "roll",
    "roll_key",
]

SYSTEM_IDS = ("d6pool", "storyteller", "nice_damnit", "age", "cofd")

_SYSTEMS: dict[str, ModuleType] = {
    "d6pool": d6pool,
    "storyteller": storyteller,
    "nice_damnit": nice_damnit,
    "age": age,
    "cofd": cofd,
}

_DEFAULT_DICE = SystemDice()


def _system(system_id: str) -> ModuleType:
    mod = _SYSTEMS.get(system_id) if isinstance(system_id, str) else None
    if mod is None:
        raise RuleError(
            f"unknown system {system_id!r}; expected one of {list(SYSTEM_IDS)}", field="system"
        )
    return mod


def resolve(system_id: str, check: Mapping[str, Any], faces: Sequence[int]) -> dict[str, Any]:
    """Resolve ``check`` from ``faces``, consumed in the order A.1 gives; all must be used."""
    mod = _system(system_id)
    params = mod.parse(check)
    expected = mod.face_count(params)
    feed = FaceFeed(system_id, faces, expected)
    if expected is not None and len(faces) != expected:
        message = (
            _("{system}: too few faces: got {got}, expected {expected} d{sides}")
            if len(faces) < expected
            else _("{system}: too many faces: got {got}, expected {expected} d{sides}")
        )
        raise RuleError(
            message,
            field="faces",
            params={
                "system": system_id,
                "got": len(faces),
                "expected": expected,
                "sides": mod.SIDES,
            },
        )
    _faces, result = mod.play(params, feed)
    feed.finish()
    return result


def roll(
    system_id: str, check: Mapping[str, Any], dice: DieSource | None = None
) -> tuple[list[int], dict[str, Any]]:
    """Roll ``check``: faces are drawn lazily from ``dice`` in exactly ``resolve``'s order.

    Returns ``(faces, result)``; ``resolve(system_id, check, faces) == result``.
    """
    mod = _system(system_id)
    faces, result = mod.play(mod.parse(check), _DEFAULT_DICE if dice is None else face_source(dice))
    return list(faces), result


def odds(system_id: str, check: Mapping[str, Any]) -> dict[str, Any]:
    """Exact outcome probabilities (and distributions) for ``check``; they sum to 1."""
    mod = _system(system_id)
    result: dict[str, Any] = mod.odds(mod.parse(check))
    return result
