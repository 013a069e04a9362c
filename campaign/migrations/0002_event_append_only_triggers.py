"""The database itself refuses UPDATE and DELETE (and TRUNCATE on PostgreSQL) on the event log."""

from django.db import migrations

from eventlog import append_only


def install(apps, schema_editor):
    append_only.install(schema_editor.connection)


def drop(apps, schema_editor):
    append_only.drop(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies = [("campaign", "0001_initial")]

    operations = [migrations.RunPython(install, drop)]
