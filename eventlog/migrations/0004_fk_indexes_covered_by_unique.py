# The event's campaign and actor lose their single-column indexes: the unique (campaign, seq)
# serves every lookup by campaign, nothing looks events up by actor, and every append wrote both.
#
# Dropped by name, found by their columns: an AlterField would rebuild the table on SQLite (copy,
# drop, rename), and its append-only triggers would go with it (eventlog/migrations/_indexes.py).

from django.conf import settings
from django.db import migrations, models

import django.db.models.deletion
from eventlog.migrations._indexes import drop_single_column_indexes


class Migration(migrations.Migration):
    dependencies = [
        ("eventlog", "0003_validate_payload_text"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                drop_single_column_indexes("campaign_event", ("campaign_id", "actor_id"))
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="event",
                    name="actor",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="event",
                    name="campaign",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="events",
                        to="campaign.campaign",
                    ),
                ),
            ],
        ),
    ]
