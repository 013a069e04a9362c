# A keyed write's row loses the user's single-column index: the unique (user, campaign_id, key)
# serves the lookups by user (a user's deletion), and every keyed write wrote it. Dropped by name,
# found by its column, as eventlog's 0004 does (no table rebuild on SQLite).

from django.conf import settings
from django.db import migrations, models

import django.db.models.deletion
from eventlog.migrations._indexes import drop_single_column_indexes


class Migration(migrations.Migration):
    dependencies = [
        ("campaign", "0008_users_are_deleted_through_the_log"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                drop_single_column_indexes("campaign_idempotentrequest", ("user_id",))
            ],
            state_operations=[
                migrations.AlterField(
                    model_name="idempotentrequest",
                    name="user",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
    ]
