"""A migration helper (the loader skips modules named with a leading underscore)."""

from django.db import migrations


def drop_single_column_indexes(table: str, columns: tuple[str, ...]) -> migrations.RunPython:
    """Drop the plain indexes of ``table`` on exactly one of ``columns``, found by their columns
    (their names are Django's hashes). An AlterField to ``db_index=False`` would rebuild the
    table on SQLite (copy, drop, rename), dropping the event table's append-only triggers."""

    def forwards(apps, schema_editor):
        connection = schema_editor.connection
        with connection.cursor() as cursor:
            constraints = connection.introspection.get_constraints(cursor, table)
        wanted = {(column,) for column in columns}
        for name, found in constraints.items():
            plain = found["index"] and not found["unique"] and not found["primary_key"]
            if plain and tuple(found["columns"]) in wanted:
                schema_editor.execute(f"DROP INDEX {schema_editor.quote_name(name)}")

    def backwards(apps, schema_editor):
        for column in columns:
            name = schema_editor._create_index_name(table, [column], suffix="")
            schema_editor.execute(
                f"CREATE INDEX {schema_editor.quote_name(name)} "
                f"ON {schema_editor.quote_name(table)} ({schema_editor.quote_name(column)})"
            )

    return migrations.RunPython(forwards, backwards)
