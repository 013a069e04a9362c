"""Model instances from rows a hand-written query returned, converted as the ORM would (JSON,
UUIDs and times per backend), for the few hot-path reads that join several tables in one round
trip. Everything else reads through the ORM."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django.db import connection, models

M = TypeVar("M", bound=models.Model)
_converters: dict[tuple[type, str], list[tuple[Any, list]]] = {}


def columns(model: type[models.Model], alias: str) -> str:
    """`alias.column, …` for every stored field of ``model``, in the order `instance` takes."""
    return ", ".join(f"{alias}.{field.column}" for field in model._meta.concrete_fields)


def width(model: type[models.Model]) -> int:
    return len(model._meta.concrete_fields)


def instance(model: type[M], values: Sequence[Any]) -> M | None:
    """The instance whose `columns(model, …)` are ``values`` (None when a LEFT JOIN found none)."""
    if values[0] is None:
        return None
    key = (model, connection.vendor)
    fields = _converters.get(key)
    if fields is None:
        fields = _converters[key] = [
            (
                field.get_col(model._meta.db_table),
                connection.ops.get_db_converters(field.get_col(model._meta.db_table))
                + field.get_db_converters(connection),
            )
            for field in model._meta.concrete_fields
        ]
    converted = []
    for value, (expression, converters) in zip(values, fields, strict=True):
        for convert in converters:
            value = convert(value, expression, connection)
        converted.append(value)
    return model.from_db(connection.alias, None, converted)
