from __future__ import annotations


class RuleError(ValueError):
    """A check, a set of faces, an option or a trait sheet that the rules do not allow.

    ``field`` names the offending key (``pool``, ``faces``, ``options.free_botch``) when known,
    so that the API can report the error against the right field; ``str()`` reads
    ``"<field>: <message>"``.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message
