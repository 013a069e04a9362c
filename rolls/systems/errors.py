from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def gettext_noop(message: str) -> str:
    """Mark a message for translation without Django (``makemessages`` finds this name); the
    server translates ``RuleError.template`` at the boundary, in the request's language."""
    return message


class RuleError(ValueError):
    """A check, a set of faces, an option or a trait sheet that the rules do not allow.

    ``field`` names the offending key (``pool``, ``faces``, ``options.free_botch``) when known,
    so that the API can report the error against the right field; ``str()`` reads
    ``"<field>: <message>"``. ``template`` and ``params`` let the server translate the message:
    ``message == template.format(**params)`` when ``params`` is given, else ``template``.
    """

    def __init__(
        self, message: str, *, field: str | None = None, params: Mapping[str, Any] | None = None
    ) -> None:
        self.template = message
        self.params = dict(params or {})
        self.message = message.format(**self.params) if params else message
        super().__init__(f"{field}: {self.message}" if field else self.message)
        self.field = field


class SheetErrors(RuleError):
    """Every bad field of a sheet at once: ``errors`` maps each field to its RuleError."""

    def __init__(self, errors: Mapping[str, RuleError]) -> None:
        first = next(iter(errors.values()))
        super().__init__(first.template, field=first.field, params=first.params)
        self.errors = dict(errors)
