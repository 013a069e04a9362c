# The values an append writes compressed with lz4 on PostgreSQL (eventlog/migrations/_compression).

from django.db import migrations

from eventlog.migrations._compression import APPENDED, compressed_with_lz4


class Migration(migrations.Migration):
    dependencies = [
        ("eventlog", "0005_append_only_triggers_again"),
        ("rolls", "0009_check_marks_json"),
        ("campaign", "0009_idempotency_user_index_covered_by_unique"),
    ]

    operations = [compressed_with_lz4(table, columns) for table, columns in APPENDED.items()]
