from django.db import migrations, models

from rolls.rules import recorded_failed_attempt, task_key

# task_key now folds width and invisible characters too (a Mac keyboard's decomposed «й» keyed
# apart from a typed one), and its NFKC can lengthen a name ("…" is "..."): the counter keeps its
# key as text. Every counter is counted again from the log, as the projector counts (a failure
# adds one; a success or a reset ends the count): where two spellings were two counters they
# become one, and a success logged under the other spelling ends it (a counter whose own key
# is still current can be wrong too, so no counter is trusted). Once, over the task events.
COUNTED = ("check.rolled", "task.reset")


def rekey(apps, schema_editor) -> None:
    # The migrating connection's (setup_database migrates as the tables' owner, not as the app).
    alias = schema_editor.connection.alias if schema_editor else "default"
    counters = apps.get_model("rolls", "TaskAttempts").objects.using(alias)
    events = apps.get_model("eventlog", "Event").objects.using(alias)
    tasked = events.filter(type__in=COUNTED, character_id__isnull=False)
    characters = set(tasked.values_list("campaign_id", "character_id").distinct())
    characters |= set(counters.values_list("campaign_id", "character_id"))
    for campaign_id, character_id in sorted(characters, key=str):
        counts: dict[str, int] = {}
        logged = (
            events.filter(campaign_id=campaign_id, character_id=character_id, type__in=COUNTED)
            .exclude(payload__task="")
            .order_by("seq")
        )
        for event in logged.iterator():
            payload = event.payload
            if event.type == "task.reset":
                counts.pop(task_key(payload["task"]), None)
                continue
            failed = recorded_failed_attempt(payload)
            if failed is None:
                continue
            key = task_key(payload.get("task") or "")
            if not key:
                continue
            if failed:
                counts[key] = counts.get(key, 0) + 1
            else:
                counts.pop(key, None)
        counters.filter(campaign_id=campaign_id, character_id=character_id).delete()
        counters.bulk_create(
            counters.model(
                campaign_id=campaign_id, character_id=character_id, task=key, failures=failures
            )
            for key, failures in counts.items()
        )


class Migration(migrations.Migration):
    dependencies = [
        ("rolls", "0007_check_key_index"),
        ("eventlog", "0005_append_only_triggers_again"),
    ]

    operations = [
        migrations.AlterField(
            model_name="taskattempts", name="task", field=models.TextField()
        ),
        migrations.RunPython(rekey, migrations.RunPython.noop),
    ]
