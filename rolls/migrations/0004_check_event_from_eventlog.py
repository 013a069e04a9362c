# Check.event now points at eventlog.Event: the same table, so only Django's state changes.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("eventlog", "0001_initial"),
        ("rolls", "0003_ruleuse_per_character"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="check",
                    name="event",
                    field=models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="+",
                        to="eventlog.event",
                    ),
                ),
            ],
        ),
    ]
