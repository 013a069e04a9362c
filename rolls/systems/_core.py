"""Shared plumbing: the error type, check validation and the list-backed face feed.

Every system module provides the same five things, so ``resolve`` and the roller share one path:

* ``parse(check) -> Params`` — validate the check dict into a hashable NamedTuple;
* ``face_count(params) -> int | None`` — how many faces the check consumes (None: it depends on
  the faces, as with CofD rerolls and explosions);
* ``play(params, src) -> (faces, result)`` — the rules, written against a face source
  (:class:`FaceSource`: ``roll(sides)``, and ``roll_many(sides, n)`` for n dice in a row);
  returns the faces in the order they were drawn, so the roller needs no recording wrapper;
* ``odds(params) -> dict`` — exact probabilities.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

# One error class for the engines, options and trait sheets; ``field`` names the bad input.
from .errors import RuleError
from .errors import gettext_noop as _

MAX_DICE = 100  # the server's cap; also bounds the work a single check can ask for
# The faces one roll may be given by hand (campaign/limits.py): MAX_DICE dice, a rote reroll of
# each, and CofD explosion chains far past any real roll's (100 dice, rote and 8-again, take
# about 243). A roll whose chains run longer can only be rolled by the server.
MAX_FACES = 4 * MAX_DICE

__all__ = ["MAX_DICE", "MAX_FACES", "FaceFeed", "FaceSource", "RuleError"]


class FaceSource(Protocol):
    """What the rules draw from: dice sources for rolling, :class:`FaceFeed` for resolving."""

    def roll(self, sides: int) -> int: ...

    def roll_many(self, sides: int, n: int) -> list[int]:
        """n faces in a row: exactly what n calls of ``roll(sides)`` would give."""
        ...


def as_mapping(system: str, check: object) -> Mapping[str, Any]:
    if not isinstance(check, Mapping):
        raise RuleError(
            f"{system}: the check must be a JSON object, got {type(check).__name__}", field="check"
        )
    return check


def get_int(
    system: str,
    check: Mapping[str, Any],
    key: str,
    default: int | None = None,
    *,
    lo: int | None = None,
    hi: int | None = None,
    where: str | None = None,
) -> int:
    """``check[key]`` as an int in lo..hi; ``where`` is the key's full name if nested."""
    v = check.get(key, default)
    name = where or key
    if v is None:
        raise RuleError(f"{system}: check key '{name}' is required (an int)", field=name)
    if not isinstance(v, int) or isinstance(v, bool):
        raise RuleError(
            f"{system}: check key '{name}' must be an int, got {type(v).__name__}", field=name
        )
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        lo_s = "" if lo is None else str(lo)
        hi_s = "" if hi is None else str(hi)
        raise RuleError(
            f"{system}: check key '{name}' must be in {lo_s}..{hi_s}, got {v}", field=name
        )
    return v


def get_bool(system: str, check: Mapping[str, Any], key: str, default: bool) -> bool:
    v = check.get(key, default)
    if not isinstance(v, bool):
        raise RuleError(f"{system}: check key '{key}' must be true or false, got {v!r}", field=key)
    return v


def get_choice(
    system: str, check: Mapping[str, Any], key: str, default: str, choices: Sequence[str]
) -> str:
    v = check.get(key, default)
    if v not in choices or not isinstance(v, str):
        raise RuleError(
            f"{system}: check key '{key}' must be one of {list(choices)}, got {v!r}", field=key
        )
    return v


def check_dice_count(system: str, n: int, what: str = "pool") -> None:
    if n > MAX_DICE:
        raise RuleError(
            f"{system}: check key '{what}' calls for {n} dice; at most {MAX_DICE} are allowed",
            field=what,
        )


_INT = {int}


class FaceFeed:
    """Hands out caller-supplied faces in order, checking each against the die it stands for."""

    __slots__ = ("expected", "faces", "pos", "system")

    def __init__(self, system: str, faces: Sequence[int], expected: int | None) -> None:
        if type(faces) not in (list, tuple) and (
            isinstance(faces, str | bytes | bytearray) or not isinstance(faces, Sequence)
        ):
            raise RuleError(
                _("{system}: faces must be a list of ints"),
                field="faces",
                params={"system": system},
            )
        self.system = system
        self.faces = faces
        self.expected = expected
        self.pos = 0

    def _too_few(self, sides: int) -> RuleError:
        params = {"system": self.system, "got": len(self.faces), "next": self.pos + 1}
        if self.expected is not None:
            message = _(
                "{system}: too few faces: got {got}, expected {expected} "
                "(face #{next} would be a d{sides})"
            )
            return RuleError(
                message, field="faces", params={**params, "expected": self.expected, "sides": sides}
            )
        message = _(
            "{system}: too few faces: got {got}, this roll needs at least {next} "
            "(face #{next} would be a d{sides})"
        )
        return RuleError(message, field="faces", params={**params, "sides": sides})

    def _bad(self, pos: int, sides: int) -> RuleError:
        return RuleError(
            _("{system}: face #{n} is {value}; expected a d{sides} face, an int in 1..{sides}"),
            field="faces",
            params={
                "system": self.system,
                "n": pos + 1,
                "value": repr(self.faces[pos]),
                "sides": sides,
            },
        )

    def roll(self, sides: int) -> int:
        pos = self.pos
        if pos >= len(self.faces):
            raise self._too_few(sides)
        f = self.faces[pos]
        if not isinstance(f, int) or isinstance(f, bool) or not 1 <= f <= sides:
            raise self._bad(pos, sides)
        self.pos = pos + 1
        return f

    def roll_many(self, sides: int, n: int) -> list[int]:
        pos = self.pos
        chunk = list(self.faces[pos : pos + n])
        # all plain ints in range (checked at C speed), else find the culprit one by one
        if chunk and not (
            set(map(type, chunk)) == _INT and min(chunk) >= 1 and max(chunk) <= sides
        ):
            for i, f in enumerate(chunk):
                if not isinstance(f, int) or isinstance(f, bool) or not 1 <= f <= sides:
                    raise self._bad(pos + i, sides)
        if len(chunk) < n:
            self.pos = pos + len(chunk)
            raise self._too_few(sides)
        self.pos = pos + n
        return chunk

    def finish(self) -> None:
        if self.pos != len(self.faces):
            raise RuleError(
                _("{system}: too many faces: got {got}, the roll used {used}"),
                field="faces",
                params={"system": self.system, "got": len(self.faces), "used": self.pos},
            )
