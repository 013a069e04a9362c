# The append-only triggers, installed again. On SQLite, campaign's 0005 (an AlterField of the
# payload) rebuilt the event table (copy, drop, rename) and its triggers went with the old table:
# every SQLite database migrated since, the embedded default's included, took UPDATE and DELETE of
# events. Installing is idempotent (PostgreSQL's triggers were never lost: it alters in place).

from django.db import migrations

from eventlog import append_only


def install(apps, schema_editor):
    append_only.install(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [
        ("eventlog", "0004_fk_indexes_covered_by_unique"),
        ("campaign", "0009_idempotency_user_index_covered_by_unique"),
    ]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
