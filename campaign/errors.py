"""Errors that services raise; the API and the socket turn them into 400/403/404/409 answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.utils.functional import Promise, lazy
from django.utils.translation import gettext

from rolls.systems.errors import RuleError, SheetErrors
from rolls.systems.rollbox import RollBoxError

T = TypeVar("T")


class DomainError(Exception):
    """``message`` may be lazy (`gettext_lazy`, `format_lazy`, a rule's error to translate): it
    is made a string when read. Most refusals are never read: the follow-ups a page offers are
    found by asking each rule and dropping its refusal (rolls.checks.eligibility.offers), and
    translating every one of them cost a catch-up more than presenting the checks (#17)."""

    status = 400
    code = "invalid"

    def __init__(
        self,
        field: str,
        message: str | Promise,
        *,
        errors: dict[str, str] | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(field)
        self.field = field
        self.lazy_message = message  # as given: for another error that says the same
        # Every bad field when there are several (a sheet); ``details`` go into the body as they
        # are (the roll box's word position and suggestions).
        self._errors = errors
        self.details = details or {}

    @property
    def message(self) -> str:
        return str(self.lazy_message)

    @property
    def errors(self) -> dict[str, str]:
        given = self._errors or {self.field: self.lazy_message}
        return {key: str(value) for key, value in given.items()}

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"

    @classmethod
    def from_rule_error(cls, error: RuleError, prefix: str = "") -> DomainError:
        details = error.details() if isinstance(error, RollBoxError) else None
        if isinstance(error, SheetErrors):
            errors = {f"{prefix}{key}": translated(each) for key, each in error.errors.items()}
            field, message = next(iter(errors.items()))
            return cls(field, message, errors=errors)
        field = getattr(error, "field", None)
        if field:
            return cls(f"{prefix}{field}", _lazy_translated(error), details=details)
        return cls(prefix.rstrip(".") or "check", _lazy_translated(error))


def translated(error: RuleError) -> str:
    """A rules message in the active language (the rules mark their messages; they are
    translated here, at the boundary, and filled in with their parameters afterwards)."""
    text = gettext(error.template)
    if not error.params:
        return text
    try:
        return text.format(**error.params)
    except (KeyError, IndexError, ValueError):  # a translation that lost a placeholder
        return error.message


_lazy_translated = lazy(translated, str)


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
