"""Size limits on everything a client sends, checked once where a JSON body or a socket frame
is parsed, before any service sees it (README "Security" lists them).

Every value kept ends up in the append-only log for good, so nothing unbounded gets in: strings,
keys, lists, objects, nesting and integers are capped here, and the services cap what they store
(a sheet, a roll's request) on top. A refusal is a 400 naming the field (`traits.skills.3`), a
body over the byte limit a 413.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework.parsers import JSONParser

from campaign.errors import DomainError, InvalidInput
from rolls.systems import MAX_FACES

# Text that DRF's trimming CharField does not find blank, as a JSON schema pattern (no NUL, one
# non-space character): the schema's word for "required text".
NON_BLANK = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"
MAX_STRING = 200  # characters in any string value (labels, titles, tasks)
MAX_KEY = 100  # characters in any object key (trait and group names…)
MAX_ITEMS = 50  # items in any list but the faces of physical dice
# Where those faces go (a check's body, the socket's roll request), a list of them or one list
# per roll: they hold as many as a roll may take (MAX_FACES), which is more than MAX_ITEMS.
FACES = frozenset({"faces", "request.faces"})
MAX_KEYS = 100  # keys in any object
MAX_DEPTH = 8  # objects and lists nested in one another
MAX_INT = 2**31 - 1  # any integer, either sign: above every real pool, id or seq
# What the services store, as compact JSON: a character sheet, a check's request.
MAX_SHEET_BYTES = 16 * 1024
MAX_REQUEST_BYTES = 4 * 1024


class TooLarge(DomainError):
    status = 413
    code = "too_large"


def max_body_bytes() -> int:
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def parse_json(text: str | bytes, field: str = "body") -> Any:
    """Decode JSON and check its shape; anything wrong is an InvalidInput naming the field."""
    value = decode_json(text, field)
    check_shape(value)
    return value


def decode_json(text: str | bytes, field: str = "body") -> Any:
    """Decode JSON within the byte limit, its shape not checked yet (`check_shape`)."""
    if len(text) > max_body_bytes():
        raise TooLarge(field, _("is larger than {n} bytes").format(n=max_body_bytes()))
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise InvalidInput(field, _NESTED.format(n=MAX_DEPTH)) from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise InvalidInput(field, _("is not valid JSON ({error})").format(error=error)) from None
    return value


_NESTED = gettext_lazy("nests deeper than {n} levels")


def check_shape(value: Any, path: str = "", depth: int = 0) -> None:
    where = path or "body"
    if isinstance(value, str):
        _check_text(value, where, MAX_STRING)
    elif isinstance(value, bool) or value is None or isinstance(value, float):
        return
    elif isinstance(value, int):
        if abs(value) > MAX_INT:
            raise InvalidInput(where, _("must be within ±{n}").format(n=MAX_INT))
    elif isinstance(value, list | dict):
        if depth >= MAX_DEPTH:
            raise InvalidInput(where, _NESTED.format(n=MAX_DEPTH))
        if isinstance(value, list):
            most = MAX_FACES if path in FACES or path.rpartition(".")[0] in FACES else MAX_ITEMS
            if len(value) > most:
                raise InvalidInput(where, _("lists hold at most {n} items").format(n=most))
            for index, item in enumerate(value):
                check_shape(item, f"{path}.{index}" if path else str(index), depth + 1)
        else:
            if len(value) > MAX_KEYS:
                raise InvalidInput(where, _("objects hold at most {n} keys").format(n=MAX_KEYS))
            for key, item in value.items():
                named = f"{path}.{key}" if path else key
                _check_text(key, path or "body", MAX_KEY, what="keys")
                check_shape(item, named, depth + 1)


def _check_text(text: str, where: str, limit: int, what: str = "text") -> None:
    keys = what == "keys"
    if len(text) > limit:
        message = (
            _("keys of at most {n} characters") if keys else _("text of at most {n} characters")
        )
        raise InvalidInput(where[:150], message.format(n=limit))
    if "\x00" in text:
        message = (
            _("keys must not contain NUL characters")
            if keys
            else _("text must not contain NUL characters")
        )
        raise InvalidInput(where[:150], message)
    if not text.isascii() and _has_lone_surrogate(text):
        if what == "keys":
            message = _("keys must not contain a lone UTF-16 surrogate (\\ud800-\\udfff)")
        else:
            message = _("text must not contain a lone UTF-16 surrogate (\\ud800-\\udfff)")
        raise InvalidInput(where[:150], message)


def _has_lone_surrogate(text: str) -> bool:
    # JSON's "\ud800" escape decodes to a lone surrogate (a pair decodes to one character). No
    # UTF-8 holds one, so whatever stores or hashes the text would fail with a 500.
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False


def plain_json(value: Any) -> Any:
    """``value`` as it will be stored in a JSON column: ids passed as UUIDs become their text."""
    return json.loads(json.dumps(value, default=str))


def check_stored_size(value: Any, field: str, limit: int) -> None:
    """Refuse a value whose compact JSON is over `limit` bytes (it would be kept for good)."""
    # default=str: services called from Python may pass ids as UUIDs, stored as their text.
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    size = len(text.encode())
    if size > limit:
        raise InvalidInput(
            field, _("is {size} bytes once stored; the limit is {n}").format(size=size, n=limit)
        )


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser with the limits above (and no RecursionError on deep nesting)."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        limit = max_body_bytes()
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise TooLarge("body", _("is larger than {n} bytes").format(n=limit))
        return parse_json(raw) if raw.strip() else {}
