import json

from django.db import migrations, models

from rolls.systems.marks_text import rolls_json

BATCH = 2000


def backfill(apps, schema_editor) -> None:
    """Each check's marks and terms from its event's payload, a batch of rows at a time (a
    long log's payloads do not fit in memory at once): a pure function of the payload, as the
    projector and a rebuild write them."""
    checks = apps.get_model("rolls", "Check")._meta.db_table
    events = apps.get_model("eventlog", "Event")._meta.db_table
    connection = schema_editor.connection
    after = 0
    with connection.cursor() as cursor:
        while True:
            cursor.execute(
                f"SELECT k.id, e.payload FROM {checks} k JOIN {events} e ON e.id = k.event_id "
                f"WHERE k.id > %s AND k.marks_json = '' ORDER BY k.id LIMIT {BATCH}",
                [after],
            )
            rows = cursor.fetchall()
            if not rows:
                return
            written = []
            for pk, payload in rows:
                data = json.loads(payload) if isinstance(payload, (str, bytes)) else payload
                written.append((rolls_json(data["system"], data["rolls"]), pk))
            cursor.executemany(f"UPDATE {checks} SET marks_json = %s WHERE id = %s", written)
            after = rows[-1][0]


class Migration(migrations.Migration):
    dependencies = [
        ("rolls", "0008_task_counters_rekeyed"),
        ("eventlog", "0005_append_only_triggers_again"),
    ]

    operations = [
        migrations.AddField(
            model_name="check",
            name="marks_json",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True),
    ]
