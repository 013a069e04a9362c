"""Read models of play (projections of check events) and the per-session dice secret."""

from __future__ import annotations

from typing import Any

from django.db import models

from campaign.models import Campaign
from eventlog.models import Event


class CheckManager(models.Manager):
    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().select_related("event")


class Check(models.Model):
    """One `check.rolled` event with its follow-ups applied: what the feed and the audit show.

    The roll itself stays in the event's payload (not copied: a long log is mostly checks);
    `amendments` holds only what follow-ups changed, and `data` composes the two. What a page
    draws of the roll as rolled is kept (`marks_json`, about 280 bytes): presenting it had to
    decode the payload, most of a catch-up's work (#17).
    """

    # No index of their own: the unique (campaign, seq) serves the campaign's look-ups, and no
    # query finds a check by its event (each index is maintained on every check written, and a
    # rebuild writes a million). No foreign key in the database either: a row copies its
    # event's campaign, which the event's own key holds (PROTECT, and the log is append-only).
    # The deferred check ran once per row at commit: 0.7 s of a rebuild's 7.8 on 200,000 events.
    campaign = models.ForeignKey(
        Campaign,
        on_delete=models.CASCADE,
        related_name="checks",
        db_index=False,
        db_constraint=False,
    )
    event = models.ForeignKey(
        Event, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+", db_index=False
    )
    seq = models.PositiveBigIntegerField()
    kind = models.CharField(max_length=20)
    system = models.CharField(max_length=20)
    actor_id = models.BigIntegerField(null=True)
    visibility = models.CharField(max_length=10)
    audience = models.JSONField(default=list)  # user ids who may see a private roll
    revealed = models.BooleanField(default=False)
    session_id = models.UUIDField(null=True)
    scene_id = models.UUIDField(null=True)
    chapter_id = models.UUIDField(null=True)
    character_id = models.UUIDField(null=True)
    label = models.CharField(max_length=200, blank=True)
    task = models.CharField(max_length=120, blank=True)
    manual = models.BooleanField(default=False)
    outcome = models.CharField(max_length=30)
    amendments = models.JSONField(default=dict)  # {"roll": {...}, "followups": [...], …}
    # What this check did to characters' resources ({character id: {"beats": 1, "fortune": -4}}),
    # so that a hidden roll's effects can be left out of what other players see.
    resource_changes = models.JSONField(default=dict)
    created_at = models.DateTimeField()
    # The roll key's index in its session (the payload's dice_key.index): the next check's key
    # is the last one's plus one, found at the end of the (campaign, seq) index in one step
    # instead of counting the session's checks under the stream lock.
    key_index = models.PositiveIntegerField(null=True)
    # The roll's dice marks and terms as rolled (its event's), as the JSON text a catch-up splices
    # in (`rolls.systems.marks_text.rolls_json`): presenting a roll then decodes no payload (#17).
    # Derived from the payload alone (migration 0009 wrote the rows before it).
    marks_json = models.TextField(blank=True, default="")

    objects = CheckManager()

    class Meta:
        ordering = ["campaign_id", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "seq"], name="one_check_per_event")
        ]
        indexes = [models.Index(fields=["campaign", "character_id", "seq"])]

    def __str__(self) -> str:
        # Not its outcome: the admin prints this in titles and links, whoever may see the roll.
        return f"check #{self.seq}"

    @property
    def data(self) -> dict[str, Any]:
        """The check as it stands: the event's payload with the follow-ups' changes applied."""
        payload = self.event.payload
        if not self.amendments:
            return payload
        first = {**payload["rolls"][0], **self.amendments.get("roll", {})}
        extra = {key: value for key, value in self.amendments.items() if key != "roll"}
        return {**payload, **extra, "rolls": [first, *payload["rolls"][1:]]}


class RuleUse(models.Model):
    """A once-per-period allowance taken: the free botch, the intentional dramatic failure."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    rule = models.CharField(max_length=40)
    period_id = models.UUIDField(null=True)  # the session / chapter / scene it counts against
    # Who took it (null: a helper roll's use); a free botch is its character's under any scope.
    character_id = models.UUIDField(null=True)
    check_seq = models.PositiveBigIntegerField()

    class Meta:
        constraints = [
            # A resisted roll can consume two free botches, one per side.
            models.UniqueConstraint(
                fields=["campaign", "rule", "check_seq", "character_id"],
                name="one_use_per_check_and_character",
            )
        ]
        indexes = [models.Index(fields=["campaign", "rule", "period_id"])]

    def __str__(self) -> str:
        return f"{self.rule} used by check #{self.check_seq}"


class TaskAttempts(models.Model):
    """Failed attempts so far at a named task (retry escalation / retry penalty)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    character_id = models.UUIDField()
    task = models.TextField()  # the task's key (`rolls.rules.task_key`): longer than its name
    failures = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "character_id", "task"], name="one_counter_per_task"
            )
        ]

    def __str__(self) -> str:
        return f"attempts at {self.task}"  # the count as a viewer may know it is the admin's


class CheckCall(models.Model):
    """The GM's call for a check: shown to the named characters' players with a roll button."""

    id = models.UUIDField(primary_key=True)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    seq = models.PositiveBigIntegerField()
    request = models.JSONField(default=dict)
    character_ids = models.JSONField(default=list)
    answered = models.JSONField(default=dict)  # character id -> check seq
    closed = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"call #{self.seq}"


class VerificationCheckpoint(models.Model):
    """How far a campaign's log has been verified, and what it proved (rolls.trust.stored_log).

    Not a projection: it is the verifier's own state (`StreamVerifier.snapshot`), so that the
    audit page and `verify_log` carry on from `seq` instead of starting over. It is trusted only
    while event `seq` still has `hash`.
    """

    campaign = models.OneToOneField(
        Campaign, primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    seq = models.PositiveBigIntegerField()
    hash = models.CharField(max_length=64)
    ok = models.BooleanField()
    state = models.JSONField()
    verified_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"verified through #{self.seq}"


class VerifiedSession(models.Model):
    """A closed session as the stored verification proved it (`StreamVerifier`'s
    SessionSummary), kept beside the checkpoint rather than in it: a closed session's summary
    never changes, so carrying the verification on reads and writes only what still can (a long
    log has thousands of sessions)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    index = models.PositiveIntegerField()  # among the campaign's sessions, from 0
    summary = models.JSONField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "index"], name="one_summary_per_session")
        ]

    def __str__(self) -> str:
        return f"session {self.index + 1} verified"
