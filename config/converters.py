"""Path converters: an id in a URL is a number the database can hold, or the URL does not match
(404), instead of an overflow deep in a query (SQLite cannot bind integers past 2**63)."""

from __future__ import annotations

from django.urls import register_converter


class IdConverter:
    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(IdConverter, "id")
