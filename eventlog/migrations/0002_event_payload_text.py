# Event.payload_text: the payload as the canonical JSON its hash covers, so that the chain is
# checked by hashing stored text (PostgreSQL's jsonb is not that text). On PostgreSQL the existing
# rows get it from their jsonb payload (the same re-encoding every verification did so far, so a
# log that verified still verifies), and a CHECK constraint refuses a new row whose text and jsonb
# differ. The append-only triggers are lifted only for the backfill, inside this migration's
# transaction, by the tables' owner that runs migrations.

from django.db import migrations, models

from eventlog.migrations._payload_text import backfill_payload_texts

CONSTRAINT = "campaign_event_payload_text_agrees"


def backfill(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return  # SQLite's payload column already is the canonical text
    backfill_payload_texts(connection)
    with connection.cursor() as cursor:
        # NOT VALID: the rows above agree by construction; every new row is checked.
        cursor.execute(
            f"ALTER TABLE campaign_event ADD CONSTRAINT {CONSTRAINT} "
            "CHECK (payload_text IS NULL OR payload_text::jsonb = payload) NOT VALID"
        )


def undo(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE campaign_event DROP CONSTRAINT IF EXISTS {CONSTRAINT}")


class Migration(migrations.Migration):
    dependencies = [("eventlog", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="event",
            name="payload_text",
            field=models.TextField(blank=True, editable=False, null=True),
        ),
        migrations.RunPython(backfill, undo),
    ]
