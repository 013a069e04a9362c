"""A migration helper (the loader skips modules named with a leading underscore): the canonical
text (`Event.payload_text`) of PostgreSQL rows stored without it, made from their jsonb payload,
the re-encoding every verification did for such a row (a log that verified still verifies). The
append-only triggers are lifted only for the backfill, inside the migration's transaction, by the
tables' owner that runs migrations."""

import json

from eventlog import append_only
from eventlog.chain import canonical_json

BATCH = 5000


def backfill_payload_texts(connection) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM campaign_event WHERE payload_text IS NULL LIMIT 1")
        if cursor.fetchone() is None:
            return
    append_only.drop(connection)
    with connection.cursor() as cursor:
        last = 0
        while True:
            cursor.execute(
                "SELECT id, payload::text FROM campaign_event WHERE id > %s AND payload_text IS NULL"
                " ORDER BY id LIMIT %s",
                [last, BATCH],
            )
            rows = cursor.fetchall()
            if not rows:
                break
            ids = [row[0] for row in rows]
            texts = [canonical_json(json.loads(row[1])) for row in rows]
            cursor.execute(
                "UPDATE campaign_event AS e SET payload_text = v.text FROM "
                "(SELECT unnest(%s::bigint[]) AS id, unnest(%s::text[]) AS text) AS v "
                "WHERE e.id = v.id",
                [ids, texts],
            )
            last = ids[-1]
    append_only.install(connection)
