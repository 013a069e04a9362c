# The Event model, moved here from the campaign app: its table, campaign_event, already exists
# (created by campaign.0001, made append-only by campaign.0002), so only Django's state changes;
# the content type follows so that permissions granted on events keep working.

import django.db.models.deletion
import eventlog.chain
from django.conf import settings
from django.db import migrations, models


def _move_content_type(apps, schema_editor, old: str, new: str) -> None:
    # On the database being migrated (setup_database migrates through the owner's alias).
    types = apps.get_model("contenttypes", "ContentType").objects.using(
        schema_editor.connection.alias
    )
    if not types.filter(app_label=new, model="event").exists():
        types.filter(app_label=old, model="event").update(app_label=new)


def move_content_type(apps, schema_editor):
    _move_content_type(apps, schema_editor, "campaign", "eventlog")


def move_content_type_back(apps, schema_editor):
    _move_content_type(apps, schema_editor, "eventlog", "campaign")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("campaign", "0005_event_payload_canonical"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Event",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("seq", models.PositiveBigIntegerField()),
                        ("type", models.CharField(max_length=64)),
                        (
                            "payload",
                            models.JSONField(default=dict, encoder=eventlog.chain.CanonicalEncoder),
                        ),
                        ("created_at", models.DateTimeField()),
                        (
                            "visibility",
                            models.CharField(
                                choices=[
                                    ("public", "public"),
                                    ("private", "private"),
                                    ("blind", "blind"),
                                ],
                                default="public",
                                max_length=10,
                            ),
                        ),
                        ("session_id", models.UUIDField(blank=True, null=True)),
                        ("scene_id", models.UUIDField(blank=True, null=True)),
                        ("chapter_id", models.UUIDField(blank=True, null=True)),
                        ("character_id", models.UUIDField(blank=True, null=True)),
                        ("prev_hash", models.CharField(max_length=64)),
                        ("hash", models.CharField(max_length=64)),
                        (
                            "actor",
                            models.ForeignKey(
                                db_constraint=False,
                                null=True,
                                on_delete=django.db.models.deletion.DO_NOTHING,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "campaign",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="events",
                                to="campaign.campaign",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "campaign_event",
                        "ordering": ["campaign_id", "seq"],
                        "indexes": [
                            models.Index(
                                fields=["campaign", "type", "seq"],
                                name="campaign_ev_campaig_d97cb4_idx",
                            ),
                            models.Index(
                                fields=["campaign", "session_id", "seq"],
                                name="campaign_ev_campaig_367bf1_idx",
                            ),
                            models.Index(
                                fields=["campaign", "chapter_id", "seq"],
                                name="campaign_ev_campaig_657e54_idx",
                            ),
                            models.Index(
                                fields=["campaign", "character_id", "seq"],
                                name="campaign_ev_campaig_3fa6bc_idx",
                            ),
                        ],
                        "constraints": [
                            models.UniqueConstraint(
                                fields=("campaign", "seq"), name="gapless_seq_per_campaign"
                            )
                        ],
                    },
                ),
            ],
        ),
        migrations.RunPython(move_content_type, move_content_type_back),
    ]
