"""A roll's dice marks and terms (`rolls.systems.marks`) as the JSON text a page splices into an
event's: the very bytes `json.dumps(…, separators=(",", ":"))` writes of them, each chain's and
each check's terms' text kept per key, since a table rolls the same few over and over (#17).

`rolls_json` is what a check row keeps of its roll as rolled (`Check.marks_json`, written with the
row), so that a catch-up presents a roll without decoding its payload.
"""

from __future__ import annotations

import json
from typing import Any

from .marks import Key, chain_keys, chain_of, dice_marks, roll_terms

dumps = json.JSONEncoder(separators=(",", ":")).encode  # what a frame's json.dumps writes

_terms: dict[tuple, str] = {}
TERMS_KEPT = 4096  # distinct checks' terms: a table rolls a few dozen kinds of check
_chains: dict[str, dict[Key, str]] = {}  # by system, then by key (no pair built per die)
CHAINS_KEPT = 4096  # distinct chains of dice per system: a few faces, explosions and rerolls


def terms_json(system: str, check: Any) -> str:
    """`roll_terms` of a roll's check as `dumps` writes it, kept per distinct check (a pure
    function of the system and the check, whose values are few: pool, again, rote…)."""
    try:
        values = tuple(check.values())  # with their types: 1, True and 1.0 are equal keys
        key = (system, tuple(check), values, tuple(map(type, values)))
        text = _terms.get(key)
    except (AttributeError, TypeError):  # not a mapping, or a value that is not hashable
        return dumps(roll_terms(system, check))
    if text is None:
        text = _keep(_terms, TERMS_KEPT, key, dumps(roll_terms(system, check)))
    return text


def _keep(table: dict[Any, str], most: int, key: Any, text: str) -> str:
    """Keep ``text`` under ``key`` in one of the tables here, emptied first when it holds
    ``most`` (a table rolls a few kinds of check and chain: it refills at once)."""
    if len(table) >= most:
        table.clear()
    table[key] = text
    return text


def marks_json(system: str, check: Any, result: Any) -> str:
    """`dice_marks` of a roll as `dumps` writes it, each chain's text kept per distinct chain
    (`rolls.systems.marks.chain_keys`)."""
    if system == "cofd":
        plain = _plain_cofd_json(result)
        if plain is not None:
            return plain
    keys = chain_keys(system, check, result)
    if keys is None:  # a face that is not an int: not kept
        return dumps(dice_marks(system, check, result))
    chains = _chains.get(system)
    if chains is None:
        chains = _chains[system] = {}
    texts = []
    for key in keys:
        text = chains.get(key)
        if text is None:
            text = _keep(chains, CHAINS_KEPT, key, dumps(chain_of(system, key)))
        texts.append(text)
    return f"[{','.join(texts)}]"


# A CofD chain's text by its faces alone: the key `chain_keys` gives such a chain, (faces,
# False, False), costs a tuple more per die (4.3-5.1 against 3.8-4.0 µs a check of 8 dice).
_plain_cofd: dict[tuple[int, ...], str] = {}


def _plain_cofd_json(result: Any) -> str | None:
    """`marks_json` of most CofD rolls (no chance die, no rote reroll: a chain's marks then
    depend on its faces alone), without `chain_keys`' key and checks per die: a long log's
    replay writes this for nearly every event. None for any other roll (and any face not an
    int)."""
    try:
        if result.get("chance_die") or result.get("rerolled"):
            return None
        texts = []
        for faces in result.get("dice") or ():
            key = tuple(faces)
            for face in key:  # 1, True and 1.0 are equal keys: only ints are kept
                if type(face) is not int:
                    return None
            text = _plain_cofd.get(key)
            if text is None:
                text = _keep(
                    _plain_cofd, CHAINS_KEPT, key, dumps(chain_of("cofd", (key, False, False)))
                )
            texts.append(text)
    except (AttributeError, TypeError):  # not the shape an engine writes: the general way
        return None
    return f"[{','.join(texts)}]"


def rolls_json(system: str, rolls: list[dict[str, Any]]) -> str:
    """``{"dice_marks":[…],"roll_terms":[…]}`` of a check's rolls, one entry per roll, as
    `dumps` writes it (an event's presentation holds the two keys in this order)."""
    if len(rolls) == 1:  # most checks: one roll, no generator to join
        (roll,) = rolls
        marks, terms = (
            marks_json(system, roll["check"], roll["result"]),
            terms_json(system, roll["check"]),
        )
    else:
        marks = ",".join(marks_json(system, roll["check"], roll["result"]) for roll in rolls)
        terms = ",".join(terms_json(system, roll["check"]) for roll in rolls)
    return f'{{"dice_marks":[{marks}],"roll_terms":[{terms}]}}'
