"""Dice sources: the HMAC derivation (checked against an independent implementation), seeding,
range, fork safety."""

import hashlib
import hmac

import pytest

from rolls.systems import DieSource, HmacDice, SeededDice, SystemDice, dice, roll


def reference_faces(seed: bytes, campaign: str, seq: int, sides: list[int]) -> list[int]:
    """The documented recipe, written out literally."""
    out, c = [], 0
    for s in sides:
        while True:
            d = hmac.new(seed, f"{campaign}|{seq}|{c}".encode(), hashlib.sha256).digest()
            c += 1
            x = int.from_bytes(d[:8], "big")
            if x < 2**64 - (2**64 % s):
                out.append(x % s + 1)
                break
    return out


def test_hmac_dice_follow_the_documented_derivation() -> None:
    sides = [6, 10, 10, 6, 3, 100, 10, 2] * 5
    src = HmacDice(b"\x00secret", "camp-42", 17)
    assert [src.roll(s) for s in sides] == reference_faces(b"\x00secret", "camp-42", 17, sides)
    assert src.counter == len(sides)  # no rejection in 40 draws (p ≈ 1e-17)
    other = HmacDice(b"\x00secret", "camp-42", 18)
    assert [other.roll(10) for _ in range(20)] != reference_faces(
        b"\x00secret", "camp-42", 17, [10] * 20
    )


def test_hmac_rejection_advances_the_counter() -> None:
    class Rejecting(HmacDice):
        def _attempt(self, c: int) -> int:
            return 2**64 - 1 if c == 0 else super()._attempt(c)

    src = Rejecting(b"k", "c", 1)
    face = src.roll(6)  # attempt 0 is rejected (x ≥ limit), attempt 1 is used
    d = hmac.new(b"k", b"c|1|1", hashlib.sha256).digest()
    assert face == int.from_bytes(d[:8], "big") % 6 + 1
    assert src.counter == 2


def test_hmac_roll_is_verifiable_from_the_log() -> None:
    faces, _ = roll("cofd", {"pool": 8, "again": 8}, HmacDice(b"seed", "c1", 5))
    assert faces == reference_faces(b"seed", "c1", 5, [10] * len(faces))


def test_seeded_dice_repeat_and_differ() -> None:
    a = [SeededDice(3).roll(10) for _ in range(1)]
    s1, s2, s3 = SeededDice(3), SeededDice(3), SeededDice(4)
    seq1 = [s1.roll(10) for _ in range(200)]
    assert seq1 == [s2.roll(10) for _ in range(200)]
    assert seq1 != [s3.roll(10) for _ in range(200)]
    assert a[0] == seq1[0]


@pytest.mark.parametrize("src", [SystemDice(), SeededDice(1), HmacDice(b"k", "c", 0)])
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


def test_hmac_seed_must_be_bytes() -> None:
    with pytest.raises(TypeError):
        HmacDice("seed", "c", 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("sides", [3, 6, 10, 300])
def test_roll_many_gives_what_single_rolls_would(sides: int) -> None:
    batched, single = SeededDice(11), SeededDice(11)
    for n in (0, 1, 8, 5000):  # 5000 crosses the 4096-byte buffer and its rejects
        assert batched.roll_many(sides, n) == [single.roll(sides) for _ in range(n)]
    h1, h2 = HmacDice(b"k", "c", 3), HmacDice(b"k", "c", 3)
    assert h1.roll_many(sides, 5) == [h2.roll(sides) for _ in range(5)]


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
