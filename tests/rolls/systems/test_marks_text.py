"""The catch-up's text of a roll's dice marks (`rolls.systems.marks_text.marks_json`), each chain's
text kept per key (`rolls.systems.marks.chain_keys`), is the very bytes `json.dumps` writes of
`dice_marks`, first time or kept, in every system (#17)."""

from __future__ import annotations

import json

from hypothesis import given, settings

from rolls.systems import SeededDice, marks_text, resolve, roll
from rolls.systems.marks import chain_keys, chain_of, dice_marks, roll_terms
from tests.rolls.systems.test_engine_properties import seeds, system_and_check


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


@settings(max_examples=400, deadline=None)
@given(system_and_check, seeds)
def test_the_kept_text_of_the_marks_is_what_json_dumps_writes(sc, seed) -> None:
    system, check = sc
    _, result = roll(system, check, SeededDice(seed))
    expected = _dumps(dice_marks(system, check, result))
    assert marks_text.marks_json(system, check, result) == expected
    assert marks_text.marks_json(system, check, result) == expected  # from the kept chains
    keys = chain_keys(system, check, result)
    assert [chain_of(system, key) for key in keys] == dice_marks(system, check, result)


def test_a_fortune_change_and_the_doubles_are_kept_apart() -> None:
    changed = {"ability": 2, "fortune_change": {"die": 2, "value": 6}}
    plain = {"ability": 2}
    for check, faces in ((changed, [3, 3, 1]), (plain, [3, 3, 1]), (plain, [3, 4, 1])):
        result = resolve("age", check, faces)
        assert marks_text.marks_json("age", check, result) == _dumps(
            dice_marks("age", check, result)
        )


def test_faces_that_are_not_ints_are_never_taken_for_ints() -> None:
    """1, True and 1.0 are equal keys; a roll with such a face is encoded, not kept."""
    for system in ("cofd", "d6pool", "storyteller", "nice_damnit"):
        nested = system == "cofd"
        for face in (1, True, 1.0, 1):
            result = {"dice": [[face]] if nested else [face], "outcome": "failure"}
            assert marks_text.marks_json(system, {}, result) == _dumps(
                dice_marks(system, {}, result)
            ), (system, face)
    assert chain_keys("cofd", {}, {"dice": [[True]]}) is None
    # No engine writes a die without faces; its text is still what json.dumps writes.
    empty = {"dice": [[], [3]], "outcome": "failure"}
    assert marks_text.marks_json("cofd", {}, empty) == _dumps(dice_marks("cofd", {}, empty))
    assert chain_keys("unknown", {}, {"dice": [1]}) == []


@settings(max_examples=200, deadline=None)
@given(system_and_check, seeds)
def test_what_a_check_row_keeps_of_its_rolls_is_what_json_dumps_writes(sc, seed) -> None:
    """`Check.marks_json`, which a catch-up splices into the roll's event as it is."""
    system, check = sc
    _, result = roll(system, check, SeededDice(seed))
    rolls = [{"check": check, "result": result}, {"check": check, "result": result}]
    assert marks_text.rolls_json(system, rolls) == _dumps(
        {
            "dice_marks": [dice_marks(system, check, result)] * 2,
            "roll_terms": [roll_terms(system, check)] * 2,
        }
    )
