"""Dice sources: where the roller gets its faces.

A source is anything with ``roll(sides: int) -> int`` returning a face in ``1..sides``
(:class:`DieSource`). ``rolls.systems.roll`` hands the source to the same resolution code that
``resolve`` feeds from a list of faces. The sources below also have ``roll_many(sides, n)``, which
returns exactly the faces n calls of ``roll(sides)`` would (the engines use it for a pool's
initial dice); :func:`face_source` adds it to any other source.

* :class:`SystemDice` (the default) — the operating system's CSPRNG (``os.urandom``).
* :class:`SeededDice` — ``random.Random(seed)``: reproducible, for tests and simulations only.
* :class:`HmacDice` — verifiable rolls. Anyone who knows ``seed`` can recompute every face.
  The derivation is fixed (other code verifies it independently). For draw attempts with a
  counter ``c = 0, 1, 2, …`` (incremented on *every* attempt, rejected ones included)::

      d = hmac.new(seed, f"{campaign}|{seq}|{c}".encode(), hashlib.sha256).digest()
      x = int.from_bytes(d[:8], "big")
      limit = 2**64 - (2**64 % sides)
      if x < limit: face = x % sides + 1      # else: try the next counter

  (The key is absorbed once and the keyed state copied per attempt: the same digest, faster.)

Byte-buffered sources take one byte per attempt and reject bytes ≥ ``256 - 256 % sides``, so every
face is exactly uniform; dice with more than 256 sides fall back to an exact ``randbelow``.
"""

from __future__ import annotations

import hmac
import os
import random
import secrets
import weakref
from itertools import islice
from typing import Any, Protocol, runtime_checkable

__all__ = ["DieSource", "HmacDice", "SeededDice", "SystemDice", "face_source"]

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
        # the next n bytes, minus rejects, then one at a time: the same faces as n roll() calls
        out = [b % sides + 1 for b in islice(self._bytes, n) if b < limit]
        while len(out) < n:
            out.append(self.roll(sides))
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


class HmacDice:
    """Verifiable faces derived from ``seed`` (see the module docstring for the exact recipe)."""

    __slots__ = ("_counter", "_keyed", "_prefix")

    def __init__(self, seed: bytes, campaign: str, seq: int) -> None:
        if not isinstance(seed, bytes | bytearray):
            raise TypeError("HmacDice seed must be bytes")
        # HMAC keyed once, copied per attempt: the same digest as hmac.new(seed, msg, sha256)
        self._keyed = hmac.new(bytes(seed), digestmod="sha256")
        self._prefix = f"{campaign}|{seq}|"
        self._counter = 0

    @property
    def counter(self) -> int:
        """The next attempt's counter, i.e. how many attempts (accepted or not) were made."""
        return self._counter

    def _attempt(self, c: int) -> int:
        h = self._keyed.copy()
        h.update(f"{self._prefix}{c}".encode())
        return int.from_bytes(h.digest()[:8], "big")

    def roll(self, sides: int) -> int:
        _check_sides(sides)
        limit = 2**64 - (2**64 % sides)
        while True:
            c = self._counter
            self._counter = c + 1
            x = self._attempt(c)
            if x < limit:
                return x % sides + 1

    def roll_many(self, sides: int, n: int) -> list[int]:
        return [self.roll(sides) for _ in range(n)]


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
