from django.db import migrations

from rolls.rules import recorded_failed_attempt, task_key

# task_key now folds width and invisible characters too (a Mac keyboard's decomposed «й» keyed
# apart from a typed one). A counter stored under the key of its day is counted again from the
# log, as the projector counts (a failure adds one; a success or a reset ends the count), for
# every character with such a counter: where two spellings were two counters they become one.
COUNTED = ("check.rolled", "task.reset")


def rekey(apps, schema_editor) -> None:
    TaskAttempts = apps.get_model("rolls", "TaskAttempts")
    Event = apps.get_model("eventlog", "Event")
    stale = {
        (row.campaign_id, row.character_id)
        for row in TaskAttempts.objects.all()
        if row.task != task_key(row.task)
    }
    for campaign_id, character_id in sorted(stale, key=str):
        counts: dict[str, int] = {}
        events = Event.objects.filter(
            campaign_id=campaign_id, character_id=character_id, type__in=COUNTED
        ).order_by("seq")
        for event in events.iterator():
            payload = event.payload
            if event.type == "task.reset":
                counts.pop(task_key(payload["task"]), None)
                continue
            failed = recorded_failed_attempt(payload)
            if failed is None:
                continue
            key = task_key(payload["task"])
            if failed:
                counts[key] = counts.get(key, 0) + 1
            else:
                counts.pop(key, None)
        TaskAttempts.objects.filter(campaign_id=campaign_id, character_id=character_id).delete()
        TaskAttempts.objects.bulk_create(
            TaskAttempts(
                campaign_id=campaign_id, character_id=character_id, task=key, failures=failures
            )
            for key, failures in counts.items()
        )


class Migration(migrations.Migration):
    dependencies = [
        ("rolls", "0007_check_key_index"),
        ("eventlog", "0005_append_only_triggers_again"),
    ]

    operations = [migrations.RunPython(rekey, migrations.RunPython.noop)]
