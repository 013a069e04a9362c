"""Errors that services raise; the API and the socket turn them into 400/403/404/409 answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from rolls.systems.errors import RuleError

T = TypeVar("T")


class DomainError(Exception):
    status = 400
    code = "invalid"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    @classmethod
    def from_rule_error(cls, error: RuleError, prefix: str = "") -> DomainError:
        field = getattr(error, "field", None)
        if field:
            return cls(f"{prefix}{field}", error.message)
        return cls(prefix.rstrip(".") or "check", str(error))


class InvalidInput(DomainError):
    status = 400
    code = "invalid"


class NotAllowed(DomainError):
    status = 403
    code = "permission_denied"


class NotFound(DomainError):
    status = 404
    code = "not_found"


class Conflict(DomainError):
    status = 409
    code = "conflict"


def call_rules(call: Callable[..., T], *args: Any, prefix: str = "", **kwargs: Any) -> T:
    """Call into the rules (engines, options, sheets), turning a RuleError into a 400 that names
    the field (``prefix`` places it, e.g. ``actions.1.``)."""
    try:
        return call(*args, **kwargs)
    except RuleError as error:
        raise InvalidInput.from_rule_error(error, prefix) from error
