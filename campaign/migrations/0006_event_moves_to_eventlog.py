# The Event model moved to the eventlog app; its table (campaign_event) stays where it is.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("campaign", "0005_event_payload_canonical"),
        ("eventlog", "0001_initial"),
        ("rolls", "0004_check_event_from_eventlog"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="Event")],
        ),
    ]
