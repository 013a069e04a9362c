from __future__ import annotations

from django.contrib import admin

from eventlog.admin import ReadOnlyAdmin
from rolls.models import (
    Check,
    CheckCall,
    RuleUse,
    TaskAttempts,
    VerificationCheckpoint,
    VerifiedSession,
)


@admin.register(Check)
class CheckAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "seq", "system", "kind", "outcome", "visibility", "manual"]
    list_filter = ["system", "outcome", "visibility", "manual"]


@admin.register(RuleUse)
class RuleUseAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "rule", "character_id", "period_id", "check_seq"]
    list_filter = ["rule"]


@admin.register(TaskAttempts)
class TaskAttemptsAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "character_id", "task", "failures"]


@admin.register(CheckCall)
class CheckCallAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "seq", "closed"]


@admin.register(VerificationCheckpoint)
class VerificationCheckpointAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "seq", "ok", "verified_at"]
    exclude = ["state"]  # the verifier's internal state: long, and not for reading here


@admin.register(VerifiedSession)
class VerifiedSessionAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "index"]
