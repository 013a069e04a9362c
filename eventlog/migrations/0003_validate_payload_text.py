# The CHECK constraint that keeps Event.payload_text and the jsonb payload equal (0002) was added
# NOT VALID, binding new rows only. Validated, it binds every row, and PostgreSQL records that
# (pg_constraint.convalidated): the full proof may then hash and decode the canonical text alone
# (rolls.trust.stored_log). Whoever drops it to edit a row can only add it back NOT VALID (or the
# edited row fails validation), and the proof then compares the two copies again, row by row.

from django.db import migrations

CONSTRAINT = "campaign_event_payload_text_agrees"


def validate(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return  # SQLite keeps one copy
    with schema_editor.connection.cursor() as cursor:
        # One pass over the log (a minute per million events): longer than a request may take.
        cursor.execute("SET LOCAL statement_timeout = 0")
        cursor.execute(f"ALTER TABLE campaign_event VALIDATE CONSTRAINT {CONSTRAINT}")


class Migration(migrations.Migration):
    dependencies = [("eventlog", "0002_event_payload_text")]

    operations = [migrations.RunPython(validate, migrations.RunPython.noop)]
