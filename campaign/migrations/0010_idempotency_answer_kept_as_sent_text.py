# The answer kept for an Idempotency-Key as the JSON text it was sent as, not jsonb: PostgreSQL
# parsed every keyed write's answer into jsonb (a tenth of its work for a check), and nothing
# queries inside it. Rows kept so far keep their jsonb's text (keys in jsonb's order).

from django.db import migrations, models

from eventlog.migrations._compression import compressed_with_lz4


class Migration(migrations.Migration):
    dependencies = [
        ("campaign", "0009_idempotency_user_index_covered_by_unique"),
    ]

    operations = [
        migrations.AlterField(
            model_name="idempotentrequest",
            name="body",
            field=models.TextField(null=True),  # noqa: DJ001
        ),
        # The type's change reset the column's compression (eventlog 0006 may have run first).
        compressed_with_lz4("campaign_idempotentrequest", ("body",)),
    ]
