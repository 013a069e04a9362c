"""The event log: one append-only stream per campaign, the source of truth of play.

Append through `eventlog.stream.append_event`; the read models that are projected from it live with
their domains (`campaign`, `rolls`). The table keeps its first name, `campaign_event`, so that the
append-only triggers, the database roles and existing logs stay as they are.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection, models
from django.utils.translation import gettext_lazy as _

from eventlog.chain import CanonicalEncoder, canonical_json


class AppendOnlyError(Exception):
    """Raised when code tries to change or delete a logged event."""


class Visibility(models.TextChoices):
    PUBLIC = "public", _("public")
    PRIVATE = "private", _("private")
    BLIND = "blind", _("blind")


class EventQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnlyError("the event log is append-only: events cannot be updated")

    def delete(self):
        raise AppendOnlyError("the event log is append-only: events cannot be deleted")

    update.queryset_only = True
    delete.queryset_only = True


class Event(models.Model):
    """One entry of a campaign's stream. Append through `eventlog.stream.append_event`."""

    # No index of its own: the unique (campaign, seq) serves every lookup by campaign, and each
    # index is written by every append (#17).
    campaign = models.ForeignKey(
        "campaign.Campaign", on_delete=models.PROTECT, related_name="events", db_index=False
    )
    seq = models.PositiveBigIntegerField()
    type = models.CharField(max_length=64)
    payload = models.JSONField(default=dict, encoder=CanonicalEncoder)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,  # nothing looks events up by actor; every append would write it
        related_name="+",
    )
    created_at = models.DateTimeField()
    visibility = models.CharField(max_length=10, choices=Visibility.choices, default="public")
    # Context denormalised from the payload for filtering; part of the hash like every column.
    session_id = models.UUIDField(null=True, blank=True)
    scene_id = models.UUIDField(null=True, blank=True)
    chapter_id = models.UUIDField(null=True, blank=True)
    character_id = models.UUIDField(null=True, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)
    # The payload as the canonical JSON its hash covers (`payload_text_for`), so that the chain
    # is checked by hashing stored text: PostgreSQL keeps `payload` as jsonb, whose text is not
    # that JSON (and costs a conversion per row). NULL on SQLite, whose `payload` column already is
    # that text. On PostgreSQL it is the one that is written: `payload` is a column generated from
    # it (eventlog.0007), so the two cannot differ, and events are not inserted through the ORM.
    # A PostgreSQL row without it exists only where the owner changed the schema since; readers
    # and verifiers then fall back to the jsonb, re-encoded.
    payload_text = models.TextField(null=True, blank=True, editable=False)  # noqa: DJ001

    objects = EventQuerySet.as_manager()

    class Meta:
        db_table = "campaign_event"
        ordering = ["campaign_id", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "seq"], name="gapless_seq_per_campaign")
        ]
        indexes = [
            models.Index(fields=["campaign", "type", "seq"]),
            models.Index(fields=["campaign", "session_id", "seq"]),
            models.Index(fields=["campaign", "chapter_id", "seq"]),
            models.Index(fields=["campaign", "character_id", "seq"]),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.type}"

    def save(self, *args, **kwargs):
        # An integrity guard, not business logic: a stored event is never rewritten, and a new
        # one is chained and written by the stream (on PostgreSQL the ORM could not even insert
        # it: the jsonb payload is generated from its text).
        if not self._state.adding:
            raise AppendOnlyError("the event log is append-only: events cannot be updated")
        raise AppendOnlyError("events are appended through eventlog.stream.append_event")

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("the event log is append-only: events cannot be deleted")


def stream_owners() -> models.Manager:
    """The rows that own the streams and hold their heads (`head_seq`, `head_hash`): the
    campaigns, reached through the log's foreign key so that the log imports nothing above it."""
    return Event._meta.get_field("campaign").related_model._default_manager


def payload_text_for(payload: Any, text: str | None = None) -> str | None:
    """What `Event.payload_text` holds for a new event with this payload on this database
    (``text``: the payload's canonical JSON, if the caller has it)."""
    if connection.vendor != "postgresql":
        return None
    return canonical_json(payload) if text is None else text
