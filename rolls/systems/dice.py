"""Dice sources: where the roller gets its faces.

A source is anything with ``roll(sides: int) -> int`` returning a face in ``1..sides``
(:class:`DieSource`). ``rolls.systems.roll`` hands the source to the same resolution code that
``resolve`` feeds from a list of faces. The sources below also have ``roll_many(sides, n)``, which
returns exactly the faces n calls of ``roll(sides)`` would (the engines use it for a pool's
initial dice); :func:`face_source` adds it to any other source.

* :class:`SystemDice` (the default) — the operating system's CSPRNG (``os.urandom``).
* :class:`SeededDice` — ``random.Random(seed)``: reproducible, for tests and simulations only.
* :class:`KeyedDice` — verifiable rolls (docs/verification.md §2). Each roll has its own key
  (:func:`roll_key`, from the session's secret seed), committed before the roll by
  :func:`key_commitment`; the event's faces come from ONE keyed hash that binds the key, the
  campaign, the event's seq and the player's client seed, expanded by SHAKE-256::

      d = hmac.new(key, f"{campaign}|{seq}|{client_seed}".encode(), "sha256").digest()
      stream = hashlib.shake_256(d).digest(n)          # as many bytes as the rolls consume

Byte-buffered sources take one byte per attempt and reject bytes ≥ ``256 - 256 % sides``, so every
face is exactly uniform; dice with more than 256 sides fall back to an exact ``randbelow``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import random
import secrets
import weakref
from itertools import islice
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "DieSource",
    "KeyedDice",
    "SeededDice",
    "SystemDice",
    "face_source",
    "key_commitment",
    "roll_digest",
    "roll_key",
]

# Largest byte value + 1 that keeps `b % sides` uniform, per number of sides (index = sides).
_BYTE_LIMITS = (0, *(256 - 256 % s for s in range(1, 257)))


@runtime_checkable
class DieSource(Protocol):
    def roll(self, sides: int) -> int:
        """One face in 1..sides, uniformly."""
        ...


def _check_sides(sides: int) -> None:
    if not isinstance(sides, int) or isinstance(sides, bool) or sides < 1:
        raise ValueError(f"a die needs a positive int number of sides, got {sides!r}")


class _ByteDice:
    """Rejection sampling from a buffer of random bytes.

    The buffer is consumed through a bytes iterator: ``next()`` on it is a single C call, so two
    threads sharing a source can never be handed the same byte (a race on refill merely discards
    a chunk).
    """

    __slots__ = ("__weakref__", "_bytes", "_chunk")

    def __init__(self, chunk: int = 4096) -> None:
        self._chunk = chunk
        self._bytes = iter(b"")

    def _refill(self, n: int) -> bytes:  # pragma: no cover - overridden
        raise NotImplementedError

    def _randbelow(self, n: int) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def roll(self, sides: int) -> int:
        if not 0 < sides <= 256:
            _check_sides(sides)
            return self._randbelow(sides) + 1
        limit = _BYTE_LIMITS[sides]
        while True:
            b = next(self._bytes, -1)
            if b < 0:
                self._bytes = iter(self._refill(self._chunk))
            elif b < limit:
                return b % sides + 1

    def roll_many(self, sides: int, n: int) -> list[int]:
        if not 0 < sides <= 256:
            return [self.roll(sides) for _ in range(n)]
        limit = _BYTE_LIMITS[sides]
        # the next bytes, minus rejects, refilled when they run out: the same faces as n roll()
        # calls (a fresh source's first call, its buffer empty, need not go one die at a time)
        out: list[int] = []
        while (want := n - len(out)) > 0:
            got = bytes(islice(self._bytes, want))
            out += [b % sides + 1 for b in got if b < limit]
            if len(got) < want:
                self._bytes = iter(self._refill(self._chunk))
        return out


_LIVE_SYSTEM_DICE: weakref.WeakSet[SystemDice] = weakref.WeakSet()


class SystemDice(_ByteDice):
    """The OS CSPRNG (``os.urandom``), read in chunks; the default source.

    Buffers are dropped in a forked child (``os.register_at_fork``), so worker processes forked
    from one parent never replay the parent's unread bytes.
    """

    __slots__ = ()

    def __init__(self, chunk: int = 1024) -> None:
        super().__init__(chunk)
        _LIVE_SYSTEM_DICE.add(self)

    def _refill(self, n: int) -> bytes:
        return os.urandom(n)

    def _randbelow(self, n: int) -> int:
        return secrets.randbelow(n)


def _drop_buffers_after_fork() -> None:
    for source in list(_LIVE_SYSTEM_DICE):
        source._bytes = iter(b"")


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_buffers_after_fork)


class SeededDice(_ByteDice):
    """``random.Random(seed)``: the same seed gives the same faces (the Mersenne Twister's bytes
    from ``randbytes``). Not for real rolls: its state can be inferred from its output."""

    __slots__ = ("_rng",)

    def __init__(self, seed: int | str | bytes | None = 0) -> None:
        super().__init__(4096)
        self._rng = random.Random(seed)

    def _refill(self, n: int) -> bytes:
        return self._rng.randbytes(n)

    def _randbelow(self, n: int) -> int:
        return self._rng.randrange(n)


def roll_key(seed: bytes, index: int) -> bytes:
    """A session's ``index``-th roll key (0, 1, …): ``HMAC-SHA256(seed, "roll-key|<index>")``.

    Keys are pseudo-random functions of the secret seed: publishing any number of them tells
    nothing about the others, so a public roll's key can be shown at once while a hidden roll's
    stays secret until the GM reveals it.
    """
    if not isinstance(seed, bytes | bytearray) or isinstance(index, bool) or index < 0:
        raise ValueError("a roll key needs a bytes seed and an index >= 0")
    return hmac.new(bytes(seed), f"roll-key|{index}".encode(), "sha256").digest()


def key_commitment(key: bytes) -> str:
    """What is published before a key is used: ``sha256(key)`` in hex."""
    return hashlib.sha256(key).hexdigest()


def roll_digest(key: bytes, campaign: int | str, seq: int, client_seed: str) -> bytes:
    """The one keyed hash of a roll: ``HMAC-SHA256(key, "<campaign>|<seq>|<client_seed>")``."""
    return hmac.new(key, f"{campaign}|{seq}|{client_seed}".encode(), "sha256").digest()


class KeyedDice(_ByteDice):
    """One event's faces: the bytes of ``SHAKE-256(roll_digest(key, campaign, seq, client_seed))``,
    one byte per attempt, a byte ``b`` giving the face ``b % sides + 1`` when
    ``b < 256 - 256 % sides`` and being skipped otherwise (dice above 256 sides take 8 bytes
    big-endian against ``2**64 - 2**64 % sides``). The stream is as long as the rolls need: its
    first n bytes never depend on how many more are read.
    """

    __slots__ = ("_used", "_xof")

    def __init__(self, key: bytes, campaign: int | str, seq: int, client_seed: str = "") -> None:
        if not isinstance(key, bytes | bytearray):
            raise TypeError("KeyedDice key must be bytes")
        super().__init__(64)
        self._xof = hashlib.shake_256(roll_digest(bytes(key), campaign, seq, client_seed))
        self._used = 0

    def _refill(self, n: int) -> bytes:
        n = max(n, self._used)  # double each time: a long explosion costs O(n) hashing overall
        out = self._xof.digest(self._used + n)[self._used :]
        self._used += n
        return out

    def _byte(self) -> int:
        while (b := next(self._bytes, -1)) < 0:
            self._bytes = iter(self._refill(self._chunk))
        return b

    def _randbelow(self, n: int) -> int:
        limit = 2**64 - 2**64 % n
        while (x := int.from_bytes(bytes(self._byte() for _ in range(8)), "big")) >= limit:
            pass
        return x % n


class _Batched:
    """Gives a plain :class:`DieSource` the ``roll_many`` the engines call."""

    __slots__ = ("roll",)

    def __init__(self, source: DieSource) -> None:
        self.roll = source.roll

    def roll_many(self, sides: int, n: int) -> list[int]:
        roll = self.roll
        return [roll(sides) for _ in range(n)]


def face_source(source: DieSource) -> Any:
    """``source`` itself if it has ``roll_many``, else a thin wrapper that adds it."""
    return source if hasattr(source, "roll_many") else _Batched(source)
