"""A campaign's read models as the database stores them, for comparing a rebuild with the state
the live projectors wrote: every table, every column, the stored values themselves (JSON as its
text on SQLite), only the generated ids left out (a rebuild numbers its rows anew)."""

from __future__ import annotations

from django.core.management import call_command
from django.db import connection, models

from eventlog.models import stream_owners
from eventlog.projections import read_models


def _stored(model: type[models.Model], where: str, campaign_id: int) -> list[tuple]:
    columns = [
        field.column
        for field in model._meta.concrete_fields
        if not (field.primary_key and isinstance(field, models.AutoField))
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(columns)} FROM {model._meta.db_table} WHERE {where} = %s",
            [campaign_id],
        )
        return sorted(cursor.fetchall(), key=repr)


def stored_tables(campaign_id: int) -> dict[str, list[tuple]]:
    tables = {"campaign": _stored(stream_owners().model, "id", campaign_id)}
    for model in read_models():
        tables[model._meta.db_table] = _stored(model, "campaign_id", campaign_id)
    return tables


def assert_rebuild_equals_live(campaign_id: int) -> dict[str, list[tuple]]:
    """Rebuild the campaign with `rebuild_projections` and compare every table with what was
    there before (the live projectors' work); returns the tables."""
    live = stored_tables(campaign_id)
    call_command("rebuild_projections", campaign=[campaign_id], stdout=None)
    rebuilt = stored_tables(campaign_id)
    for table, rows in live.items():
        assert rebuilt[table] == rows, f"{table} after a rebuild: {rebuilt[table]} != {rows}"
    return rebuilt
