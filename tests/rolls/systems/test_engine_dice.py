"""Dice sources: the per-roll keyed derivation (checked against an independent implementation),
seeding, range, fork safety."""

import hashlib
import hmac

import pytest

from rolls.systems import DieSource, KeyedDice, SeededDice, SystemDice, dice, roll
from rolls.systems.dice import key_commitment, roll_key


def reference_faces(key: bytes, campaign: str, seq: int, client: str, sides: list[int]) -> list:
    """The documented recipe (docs/verification.md §2), written out literally."""
    d = hmac.new(key, f"{campaign}|{seq}|{client}".encode(), hashlib.sha256).digest()
    stream = iter(hashlib.shake_256(d).digest(4096))
    out = []
    for s in sides:
        b = next(stream)
        while b >= 256 - 256 % s:
            b = next(stream)
        out.append(b % s + 1)
    return out


def test_keyed_dice_follow_the_documented_derivation() -> None:
    sides = [6, 10, 10, 6, 3, 100, 10, 2] * 40  # 320 faces: several refills of the stream
    key = roll_key(b"\x00secret", 4)
    src = KeyedDice(key, "42", 17, "c0ffee")
    assert [src.roll(s) for s in sides] == reference_faces(key, "42", 17, "c0ffee", sides)
    assert key == hmac.new(b"\x00secret", b"roll-key|4", hashlib.sha256).digest()
    assert key_commitment(key) == hashlib.sha256(key).hexdigest()


@pytest.mark.parametrize(
    "change", [{"seq": 18}, {"campaign": "43"}, {"client": "c0ffef"}, {"client": ""}]
)
def test_every_input_of_the_derivation_changes_the_faces(change: dict) -> None:
    inputs = {"campaign": "42", "seq": 17, "client": "c0ffee"}
    key = roll_key(b"seed", 0)
    faces = reference_faces(key, *inputs.values(), [10] * 20)
    changed = reference_faces(key, *{**inputs, **change}.values(), [10] * 20)
    assert faces != changed
    assert reference_faces(roll_key(b"seed", 1), *inputs.values(), [10] * 20) != faces


def test_roll_keys_are_independent_of_each_other() -> None:
    keys = {roll_key(b"seed", i) for i in range(1000)}
    assert len(keys) == 1000
    with pytest.raises(ValueError):
        roll_key(b"seed", -1)


def test_keyed_roll_is_verifiable_from_the_log() -> None:
    key = roll_key(b"seed", 0)
    faces, _ = roll("cofd", {"pool": 8, "again": 8}, KeyedDice(key, "c1", 5, "ab"))
    assert faces == reference_faces(key, "c1", 5, "ab", [10] * len(faces))


def test_seeded_dice_repeat_and_differ() -> None:
    a = [SeededDice(3).roll(10) for _ in range(1)]
    s1, s2, s3 = SeededDice(3), SeededDice(3), SeededDice(4)
    seq1 = [s1.roll(10) for _ in range(200)]
    assert seq1 == [s2.roll(10) for _ in range(200)]
    assert seq1 != [s3.roll(10) for _ in range(200)]
    assert a[0] == seq1[0]


@pytest.mark.parametrize("src", [SystemDice(), SeededDice(1), KeyedDice(b"k", "c", 0)])
def test_faces_in_range_and_protocol(src: DieSource) -> None:
    assert isinstance(src, DieSource)
    for sides in (1, 2, 6, 10, 20, 255, 256, 257, 1000):
        faces = {src.roll(sides) for _ in range(300)}
        assert min(faces) >= 1 and max(faces) <= sides
    assert {src.roll(6) for _ in range(300)} == set(range(1, 7))
    for bad in (0, -3):
        with pytest.raises(ValueError):
            src.roll(bad)


def test_system_dice_drop_their_buffer_in_a_forked_child() -> None:
    src = SystemDice()
    src.roll(10)  # fills the buffer
    dice._drop_buffers_after_fork()  # what os.register_at_fork runs in the child
    assert next(src._bytes, None) is None


def test_keyed_dice_key_must_be_bytes() -> None:
    with pytest.raises(TypeError):
        KeyedDice("key", "c", 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("sides", [3, 6, 10, 300])
def test_roll_many_gives_what_single_rolls_would(sides: int) -> None:
    batched, single = SeededDice(11), SeededDice(11)
    for n in (0, 1, 8, 5000):  # 5000 crosses the 4096-byte buffer and its rejects
        assert batched.roll_many(sides, n) == [single.roll(sides) for _ in range(n)]
    k1, k2 = KeyedDice(b"k", "c", 3), KeyedDice(b"k", "c", 3)
    assert k1.roll_many(sides, 500) == [k2.roll(sides) for _ in range(500)]


def test_any_die_source_can_drive_the_roller() -> None:
    class Cycle:
        def __init__(self) -> None:
            self.n = 0

        def roll(self, sides: int) -> int:
            self.n += 1
            return (self.n - 1) % sides + 1

    assert dice.face_source(SeededDice(1)).roll_many(6, 2)
    faces, result = roll("cofd", {"pool": 12}, Cycle())
    assert faces[:12] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2]
    assert faces[12:] == [3]  # the 10 explodes into the next face
    assert result["successes"] == 3
