"""Dice marks (`rolls.systems.marks`): what the pages highlight agrees with what the engine counted,
for every system and option, so the JS needs no threshold of its own."""

from hypothesis import given, settings

from rolls.systems import SeededDice, resolve, roll
from rolls.systems.marks import dice_marks
from tests.rolls.systems.test_engine_properties import seeds, system_and_check


def _dice(chains: list[list[dict]]) -> list[dict]:
    return [die for chain in chains for die in chain]


def _with(chains: list[list[dict]], mark: str) -> list[int]:
    return [die["face"] for die in _dice(chains) if mark in die["marks"]]


@settings(max_examples=400, deadline=None)
@given(system_and_check, seeds)
def test_marks_agree_with_the_engine_counts(sc: tuple[str, dict], seed: int) -> None:
    system, check = sc
    faces, result = roll(system, check, SeededDice(seed))
    chains = dice_marks(system, check, result)
    # Every face the engine drew is drawn, once (a face Fortune set was not drawn).
    drawn = [die["face"] for die in _dice(chains) if "fortune" not in die["marks"]]
    assert sorted(drawn) == sorted(faces)
    successes = len(_with(chains, "success"))
    if system in ("d6pool", "storyteller") and result["outcome"] != "impossible":
        if system == "storyteller" or result["mode"] == "normal":
            assert successes == result["hits"]
            assert len(_with(chains, "one")) == result["ones"]
        elif result["outcome"] == "success":  # desperate: every die met the requirement
            assert successes == len(faces)
    if system == "cofd":
        extra = check.get("extra_successes", 0) if result["successes"] else 0
        counted = result["successes"] - extra
        assert successes == counted
        assert len(_with(chains, "explodes")) == len(_with(chains, "exploded"))
        assert len(_with(chains, "rerolled")) == len(result["rerolled"])
    if system == "age" and faces:
        final = [chain[-1]["face"] for chain in chains]
        assert final == result["faces"]
        assert "drama" in chains[2][-1]["marks"]
    if system == "nice_damnit":
        assert all(not die["marks"] for die in _dice(chains))


def test_a_desperate_all_sixes_roll_marks_only_sixes() -> None:
    """The bug this module ends: the page drew 4s and 5s as hits under `all_sixes`."""
    check = {"pool": 0, "desperate": "all_sixes"}
    result = resolve("d6pool", check, [4, 6])
    assert _with(dice_marks("d6pool", check, result), "success") == [6]
    lenient = {"pool": 0, "desperate": "all_hits"}
    result = resolve("d6pool", lenient, [4, 6])
    assert _with(dice_marks("d6pool", lenient, result), "success") == [4, 6]


def test_a_cofd_chain_marks_reroll_and_explosions() -> None:
    check = {"pool": 1, "again": 10, "rote": True}
    result = resolve("cofd", check, [3, 10, 8])
    assert dice_marks("cofd", check, result) == [
        [
            {"face": 3, "sides": 10, "marks": ["rerolled"]},
            {"face": 10, "sides": 10, "marks": ["success", "explodes"]},
            {"face": 8, "sides": 10, "marks": ["success", "exploded"]},
        ]
    ]


def test_a_chance_die_counts_only_a_ten_and_its_one_is_dramatic() -> None:
    check = {"pool": 0}
    nine = dice_marks("cofd", check, resolve("cofd", check, [9]))
    assert nine == [[{"face": 9, "sides": 10, "marks": ["chance"]}]]
    one = dice_marks("cofd", check, resolve("cofd", check, [1]))
    assert one == [[{"face": 1, "sides": 10, "marks": ["chance", "one"]}]]


def test_fortune_shows_the_face_rolled_and_the_face_set() -> None:
    check = {"ability": 2, "fortune_change": {"die": 2, "value": 6}}
    result = resolve("age", check, [3, 3, 1])
    assert dice_marks("age", check, result)[2] == [
        {"face": 1, "sides": 6, "marks": ["rerolled", "drama"]},
        {"face": 6, "sides": 6, "marks": ["fortune", "drama"]},
    ]
    assert dice_marks("age", check, result)[0] == [{"face": 3, "sides": 6, "marks": ["double"]}]
