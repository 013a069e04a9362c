"""Which dice of a resolved roll counted, and how: what the pages draw, decided beside the rules.

``dice_marks(system, check, result)`` reads an engine's result (and the check it resolved) and
returns one chain per die: the die, then its rote reroll and its explosions (CofD), or the face
rolled and the face Fortune set (AGE). Each die is ``{"face", "sides", "marks"}``; the marks are
``success``, ``one`` (a 1 that counts against the roll), ``rerolled``, ``explodes``,
``exploded``, ``chance``, ``drama``, ``fortune`` and ``double``. The JS draws these marks and
holds no threshold of its own (a desperate d6pool roll under ``all_sixes`` counts only 6s).

``roll_terms(system, check)`` says what a check rolls, after its breakdown's sum, in words the
pages translate by name: ``{"term": "pool_dice", "n": 5}``, ``{"term": "chance_die"}``,
``{"term": "desperate"}``, ``{"term": "difficulty", "n": 6}``, ``{"term": "again_8"}``,
``{"term": "again_none"}``, ``{"term": "rote"}``, ``{"term": "dice_sum", "dice": "3d6",
"bonus": 7}`` (the AGE focus's +2 included), ``{"term": "vs_tn", "n": 11}``. The JS prints them
and decides none (issue #11): no chance-die pool, desperate pool or focus bonus in the browser.

Pure Python, derived only from what the result records, so an old event is marked the same way
as a new one; tests check that the marks agree with the engine's own counts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import age, cofd, d6pool, nice_damnit, storyteller
from .errors import RuleError

Die = dict[str, Any]
Chain = list[Die]
DESPERATE_SIX = 6  # d6pool §1.6 B: in `all_sixes` mode only a 6 is a hit
D6POOL_HIT = 4  # d6pool §1.4: 4-6 are hits
COFD_SUCCESS = 8  # CofD §3.3: 8, 9 and 10 succeed
COFD_CHANCE_SUCCESS = 10  # CofD §3.4: a chance die succeeds only on a 10


def _die(face: int, sides: int, *marks: str) -> Die:
    return {"face": face, "sides": sides, "marks": [mark for mark in marks if mark]}


# Each system marks a roll in two steps: the key of each chain (the die's faces, then what else
# its marks depend on, read from the check and the whole result) and the chain a key gives, so
# equal keys give equal chains. The pages' text of a chain is kept per key
# (rolls.reads.present): a table rolls the same few chains over and over.
Key = tuple[Any, ...]  # (the chain's faces, then flags: each a bool)
Keys = Callable[[Mapping[str, Any], Mapping[str, Any]], list[Key]]


def _d6pool_keys(check: Mapping[str, Any], result: Mapping[str, Any]) -> list[Key]:
    desperate = result.get("mode") == "desperate"
    lowest_hit = (
        DESPERATE_SIX if desperate and check.get("desperate") == "all_sixes" else D6POOL_HIT
    )
    # A 1 subtracts in normal mode; in desperate mode it matters only for a critical failure.
    ones_count = not desperate or result.get("outcome") == "critical_failure"
    return [
        ((face,), face >= lowest_hit, face == 1 and ones_count) for face in result.get("dice") or []
    ]


def _d6pool_chain(key: Key) -> Chain:
    (face,), hit, one = key
    return [_die(face, d6pool.SIDES, "success" if hit else "", "one" if one else "")]


def _storyteller_keys(check: Mapping[str, Any], result: Mapping[str, Any]) -> list[Key]:
    target = result.get("target", 11)
    return [((face,), face >= target) for face in result.get("dice") or []]


def _storyteller_chain(key: Key) -> Chain:
    (face,), hit = key
    return [_die(face, storyteller.SIDES, "success" if hit else "", "one" if face == 1 else "")]


def _cofd_keys(check: Mapping[str, Any], result: Mapping[str, Any]) -> list[Key]:
    chance = bool(result.get("chance_die"))
    rerolled = set(result.get("rerolled") or [])
    return [
        (tuple(faces), chance, index in rerolled)
        for index, faces in enumerate(result.get("dice") or [])
    ]


def _cofd_chain(key: Key) -> Chain:
    faces, chance, rerolled = key
    if len(faces) == 1 and not chance and not rerolled:  # most dice: one face
        face = faces[0]
        return [
            {
                "face": face,
                "sides": cofd.SIDES,
                "marks": ["success"] if face >= COFD_SUCCESS else [],
            }
        ]
    chain: Chain = []
    rest = list(faces)
    if rerolled and len(rest) > 1:
        chain.append(_die(rest.pop(0), cofd.SIDES, "rerolled", "chance" if chance else ""))
    for position, face in enumerate(rest):
        if chance and position == 0:
            marks = [
                "chance",
                "success" if face == COFD_CHANCE_SUCCESS else "",
                "one" if face == 1 else "",
            ]
        else:
            marks = ["success" if face >= COFD_SUCCESS else ""]
        marks.append("exploded" if position > 0 else "")
        marks.append("explodes" if position < len(rest) - 1 else "")
        chain.append(_die(face, cofd.SIDES, *marks))
    return chain


def _age_keys(check: Mapping[str, Any], result: Mapping[str, Any]) -> list[Key]:
    final = result.get("faces") or []
    change = check.get("fortune_change") or {}
    changed = change.get("die") if isinstance(change, Mapping) else None
    doubles = bool(result.get("doubles"))
    keys = []
    for index, face in enumerate(result.get("rolled") or []):
        set_to = final[index] if index < len(final) else face
        double = doubles and final.count(set_to) > 1
        keys.append(((face, set_to), index == age.DRAMA, double, index == changed))
    return keys


def _age_chain(key: Key) -> Chain:
    (face, set_to), is_drama, is_double, changed = key
    drama = "drama" if is_drama else ""
    double = "double" if is_double else ""
    if changed:
        return [
            _die(face, age.SIDES, "rerolled", drama),
            _die(set_to, age.SIDES, "fortune", drama, double),
        ]
    return [_die(face, age.SIDES, drama, double)]


def _faces_keys(check: Mapping[str, Any], result: Mapping[str, Any]) -> list[Key]:
    return [((face,),) for face in result.get("dice") or []]


def _unmarked(sides: int) -> Callable[[Key], Chain]:
    def chain(key: Key) -> Chain:
        return [_die(key[0][0], sides)]

    return chain


_MARKERS: dict[str, tuple[Keys, Callable[[Key], Chain]]] = {
    "d6pool": (_d6pool_keys, _d6pool_chain),
    "storyteller": (_storyteller_keys, _storyteller_chain),
    "cofd": (_cofd_keys, _cofd_chain),
    "age": (_age_keys, _age_chain),
    # §5.2: the total sets the band and the chips; no single die counts on its own.
    "nice_damnit": (_faces_keys, _unmarked(10)),
}


def dice_marks(system: str, check: Mapping[str, Any], result: Mapping[str, Any]) -> list[Chain]:
    """The dice of one resolved roll, in chains, each die with the marks the rules give it."""
    marker = _MARKERS.get(system)
    if marker is None:
        return []
    keys, chain = marker
    return [chain(key) for key in keys(check or {}, result or {})]


def chain_keys(
    system: str, check: Mapping[str, Any], result: Mapping[str, Any]
) -> list[Key] | None:
    """The key of each chain `dice_marks` gives, each made into its chain by `chain_of`: equal
    keys, equal chains. None when a face is not an int (1, True and 1.0 are equal keys)."""
    marker = _MARKERS.get(system)
    if marker is None:
        return []
    keys = marker[0](check or {}, result or {})
    for key in keys:
        for face in key[0]:
            if type(face) is not int:
                return None
    return keys


def chain_of(system: str, key: Key) -> Chain:
    """The chain of a key of `chain_keys`."""
    return _MARKERS[system][1](key)


Term = dict[str, Any]


def _pool_terms(check: Mapping[str, Any]) -> list[Term]:
    pool = check.get("pool")
    return [{"term": "pool_dice", "n": pool}] if isinstance(pool, int) else []


def _cofd_terms(check: Mapping[str, Any]) -> list[Term]:
    p = cofd.parse(check)
    terms = (
        [{"term": "chance_die"}] if p.pool <= 0 else [{"term": "pool_dice", "n": p.pool}]
    )  # §3.2: a pool of 0 or less rolls a chance die
    if p.again is None:
        terms.append({"term": "again_none"})
    elif p.again != 10:  # 10-again is every roll's: said only when it is not
        terms.append({"term": f"again_{p.again}"})
    if p.rote:
        terms.append({"term": "rote"})
    return terms


def _d6pool_terms(check: Mapping[str, Any]) -> list[Term]:
    p = d6pool.parse(check)
    terms = [{"term": "pool_dice", "n": p.pool}]
    if d6pool.dice_count(p.pool) != p.pool:  # §1.3: below one die, the desperate roll
        terms.append({"term": "desperate"})
    return terms


def _storyteller_terms(check: Mapping[str, Any]) -> list[Term]:
    p = storyteller.parse(check)
    return [{"term": "pool_dice", "n": p.pool}, {"term": "difficulty", "n": p.difficulty}]


def _age_terms(check: Mapping[str, Any]) -> list[Term]:
    p = age.parse(check)
    terms = [{"term": "dice_sum", "dice": f"3d{age.SIDES}", "bonus": age.bonus(p)}]
    if p.target is not None:
        terms.append({"term": "vs_tn", "n": p.target})
    return terms


def _nice_damnit_terms(check: Mapping[str, Any]) -> list[Term]:
    p = nice_damnit.parse(check)
    return [{"term": "dice_sum", "dice": f"2d{nice_damnit.SIDES}", "bonus": p.bonus}]


_TERMS: dict[str, Callable[[Mapping[str, Any]], list[Term]]] = {
    "d6pool": _d6pool_terms,
    "storyteller": _storyteller_terms,
    "cofd": _cofd_terms,
    "age": _age_terms,
    "nice_damnit": _nice_damnit_terms,
}


def roll_terms(system: str, check: Mapping[str, Any]) -> list[Term]:
    """What ``check`` rolls, as named terms the pages print after the breakdown's sum."""
    terms = _TERMS.get(system)
    if terms is None or not isinstance(check, Mapping):
        return []
    try:
        return terms(check)
    except RuleError:  # a check the engine would refuse names no more than its pool
        return _pool_terms(check)
