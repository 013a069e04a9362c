"""The campaign domain: campaigns, members, characters and the play periods, as read models
projected from the event log (`eventlog.models.Event`, rebuilt by `manage.py rebuild_projections`),
except a campaign's stream head (`head_seq`, `head_hash`) and its invite code, which are
infrastructure rather than play.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from rolls.systems import SYSTEM_IDS

SYSTEM_CHOICES = [(system_id, system_id) for system_id in SYSTEM_IDS]


def new_invite_code() -> str:
    return secrets.token_urlsafe(9)


class Campaign(models.Model):
    name = models.CharField(_("name"), max_length=120)
    system = models.CharField(_("game system"), max_length=20, choices=SYSTEM_CHOICES)
    options = models.JSONField(_("rule options"), default=dict)
    invite_code = models.CharField(max_length=32, unique=True, default=new_invite_code)
    # The stream head: the row that appends lock, and the last seq/hash they chain to.
    head_seq = models.PositiveBigIntegerField(default=0)
    head_hash = models.CharField(max_length=64, default="0" * 64)
    # The seq of the last event that changed who is a member or in what role: read with the
    # stream lock, it tells a process whether the roster it keeps is current (rolls/live).
    roster_seq = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.system})"


class Role(models.TextChoices):
    GM = "gm", _("game master")
    PLAYER = "player", _("player")
    OBSERVER = "observer", _("observer")


class Membership(models.Model):
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="memberships")
    # PROTECT: an account is deleted through accounts.deletion, which records in the log that
    # it left; a row vanishing without an event would make a read model the log cannot rebuild.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    role = models.CharField(max_length=10, choices=Role.choices)
    joined_seq = models.PositiveBigIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "user"], name="one_membership_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} as {self.role} in {self.campaign_id}"


class Character(models.Model):
    id = models.UUIDField(primary_key=True)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="characters")
    owner = models.ForeignKey(  # PROTECT: as Membership.user
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT
    )
    name = models.CharField(_("name"), max_length=120)
    traits = models.JSONField(default=dict)
    resources = models.JSONField(default=dict)
    # Saved lines of the roll box: [{"id", "name", "text"}], for the character's controllers.
    favourites = models.JSONField(default=list)
    created_seq = models.PositiveBigIntegerField()
    updated_seq = models.PositiveBigIntegerField()

    class Meta:
        ordering = ["created_seq"]

    def __str__(self) -> str:
        return self.name


class Period(models.Model):
    """A stretch of play with a number, opened and closed by events (chapters and sessions)."""

    id = models.UUIDField(primary_key=True)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    number = models.PositiveIntegerField()
    title = models.CharField(max_length=200, blank=True)
    started_seq = models.PositiveBigIntegerField()
    ended_seq = models.PositiveBigIntegerField(null=True, blank=True)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["number"]

    @property
    def is_open(self) -> bool:
        return self.ended_seq is None

    @classmethod
    def open_in(cls, campaign: Campaign | int):
        """The campaign's open chapter / session / scene, or None."""
        return cls.objects.filter(campaign=campaign, ended_seq__isnull=True).first()


class Chapter(Period):
    class Meta(Period.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["campaign"],
                condition=models.Q(ended_seq__isnull=True),
                name="one_open_chapter_per_campaign",
            )
        ]

    def __str__(self) -> str:
        return f"Chapter {self.number}"


class Session(Period):
    class Meta(Period.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["campaign"],
                condition=models.Q(ended_seq__isnull=True),
                name="one_open_session_per_campaign",
            )
        ]

    def __str__(self) -> str:
        return f"Session {self.number}"


class SessionSecret(models.Model):
    """The secret seed of a session's server-rolled dice; `session.started` carries only its
    SHA-256 commitment and `session.ended` reveals it. Nothing shows it before that.

    Not a projection: it cannot be derived from the log (that is the point) until the reveal.
    """

    session_id = models.UUIDField(primary_key=True)
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="+")
    seed = models.BinaryField()

    def __str__(self) -> str:  # never print the seed
        return f"secret of session {self.session_id}"


class Scene(Period):
    """A scene within play; the GMC's once-per-scene intentional dramatic failure counts these."""

    class Meta(Period.Meta):
        constraints = [
            models.UniqueConstraint(
                fields=["campaign"],
                condition=models.Q(ended_seq__isnull=True),
                name="one_open_scene_per_campaign",
            )
        ]

    def __str__(self) -> str:
        return f"Scene {self.number}"


class IdempotentRequest(models.Model):
    """The first answer to a write sent with an Idempotency-Key (a socket command's request_id),
    so that a retry gets that answer instead of writing twice. Written in the write's own
    transaction (a committed roll always has its key); not part of the event log, and deleted
    once older than IDEMPOTENCY_KEY_HOURS."""

    # No index of its own: the unique (user, campaign_id, key) serves the lookups by user, and
    # each index is written by every keyed write (#17).
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    campaign_id = models.BigIntegerField(default=0)  # 0: a write about no one campaign (join)
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)  # what was asked: the same key asks the same
    status = models.PositiveSmallIntegerField()
    # The answer's JSON text as it was sent. Text, not jsonb: PostgreSQL parsing it into jsonb
    # was a tenth of its work for a check sent with a key, and nothing queries inside it.
    body = models.TextField(null=True)  # noqa: DJ001 (null: a 204's answer has no text)
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "campaign_id", "key"], name="idempotency_key_once_per_scope"
            )
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.status})"
