# PostgreSQL: the jsonb payload becomes a stored generated column of the canonical text the hash
# covers (`payload_text::jsonb`), instead of a second copy bound to it by the CHECK constraint of
# 0002. The two are equal by construction, and an append parses its payload once: the value and
# the constraint each parsed it, about a tenth of the server's instructions for a check (#17).
# The text is NOT NULL now (rows stored without it get it first, as in 0002). Adding the column
# rewrites the table once (45 s for a million events, 2.9 GB, on a 2-core machine; backwards,
# validating the constraint, 23 s). SQLite keeps its one copy.
# Code from before this migration cannot append after it, nor this code before it: stop the
# server for `migrate` (docs/operations.md, Upgrades).
#
# Who verifies learns that the copies agree from the catalog (rolls.trust.stored_log,
# `_one_payload_copy`): whoever takes the expression away to edit the jsonb (the owner, ALTER
# COLUMN … DROP EXPRESSION) leaves a plain column, and the proof compares the copies again.

from django.db import migrations

from eventlog.migrations._compression import lz4_available
from eventlog.migrations._payload_text import backfill_payload_texts

CONSTRAINT = "campaign_event_payload_text_agrees"


def generate(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    backfill_payload_texts(connection)
    # The rewrite compresses every row's jsonb: with lz4, as 0006 set the column before.
    compression = "COMPRESSION lz4 " if lz4_available(connection) else ""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL statement_timeout = 0")  # the rewrite: longer than a request
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no pending trigger events before ALTER
        cursor.execute(
            f"ALTER TABLE campaign_event DROP CONSTRAINT IF EXISTS {CONSTRAINT}, "
            "ALTER COLUMN payload_text SET NOT NULL, "
            f"ADD COLUMN payload_from_text jsonb {compression}NOT NULL "
            "GENERATED ALWAYS AS (payload_text::jsonb) STORED, "
            "DROP COLUMN payload"
        )
        cursor.execute("ALTER TABLE campaign_event RENAME COLUMN payload_from_text TO payload")


def store(apps, schema_editor):
    """Backwards: the jsonb a plain column again (values and compression kept), bound to the
    text by the validated constraint of 0002 and 0003."""
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL statement_timeout = 0")
        cursor.execute(
            "ALTER TABLE campaign_event ALTER COLUMN payload DROP EXPRESSION, "
            "ALTER COLUMN payload_text DROP NOT NULL, "
            f"ADD CONSTRAINT {CONSTRAINT} "
            "CHECK (payload_text IS NULL OR payload_text::jsonb = payload)"
        )


class Migration(migrations.Migration):
    dependencies = [("eventlog", "0006_appended_values_compressed_with_lz4")]

    operations = [migrations.RunPython(generate, store)]
