"""A migration helper (the loader skips modules named with a leading underscore): the values an
append writes compressed with lz4 on PostgreSQL instead of its default pglz.

A check's rows pass the 2 kB at which PostgreSQL compresses a value, and pglz was a fifth of the
server's instructions for a check (648k of 3.36M, callgrind; lz4: 82k), spent inside the
campaign's lock. Values already stored keep their compression; a server built without lz4 keeps
pglz; SQLite compresses nothing. A column's type change resets its compression: a migration
that changes one of these columns' types sets it again (campaign 0010)."""

from django.db import migrations

# The event's payload and its canonical text, the check row's JSON, a write's recorded answer.
APPENDED = {
    "campaign_event": ("payload", "payload_text"),
    "rolls_check": ("audience", "amendments", "resource_changes", "marks_json"),
    "campaign_idempotentrequest": ("body",),
}


def lz4_available(connection) -> bool:
    """Was this PostgreSQL server built with lz4?"""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
        )
        return bool(cursor.fetchone()[0])


def compressed_with_lz4(table: str, columns: tuple[str, ...]) -> migrations.RunPython:
    def set_compression(method: str):
        def run(apps, schema_editor):
            connection = schema_editor.connection
            if connection.vendor != "postgresql" or not lz4_available(connection):
                return
            quote = schema_editor.quote_name
            changes = ", ".join(
                f"ALTER COLUMN {quote(column)} SET COMPRESSION {method}" for column in columns
            )
            schema_editor.execute(f"ALTER TABLE {quote(table)} {changes}")

        return run

    return migrations.RunPython(set_compression("lz4"), set_compression("default"))
