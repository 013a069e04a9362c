# The values an append writes (the event's payload and its canonical text, the check row's JSON,
# a write's recorded answer) compressed with lz4 instead of PostgreSQL's default pglz. A check's
# rows pass the 2 kB at which PostgreSQL compresses a value, and pglz was a fifth of the
# server's instructions for a check (648k of 3.36M, callgrind; lz4: 82k), spent inside the
# campaign's lock. Values already stored keep their compression; a server built without lz4
# keeps pglz. SQLite compresses nothing.

from django.db import migrations

COLUMNS = {
    "campaign_event": ("payload", "payload_text"),
    "rolls_check": ("audience", "amendments", "resource_changes", "marks_json"),
    "campaign_idempotentrequest": ("body",),
}


def _set(method: str):
    def run(apps, schema_editor):
        connection = schema_editor.connection
        if connection.vendor != "postgresql":
            return
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT 'lz4' = ANY(enumvals) FROM pg_settings "
                "WHERE name = 'default_toast_compression'"
            )
            if not cursor.fetchone()[0]:
                return
        quote = schema_editor.quote_name
        for table, columns in COLUMNS.items():
            changes = ", ".join(
                f"ALTER COLUMN {quote(column)} SET COMPRESSION {method}" for column in columns
            )
            schema_editor.execute(f"ALTER TABLE {quote(table)} {changes}")

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("eventlog", "0005_append_only_triggers_again"),
        ("rolls", "0009_check_marks_json"),
        ("campaign", "0009_idempotency_user_index_covered_by_unique"),
    ]

    operations = [migrations.RunPython(_set("lz4"), _set("default"))]
