"""The log and the read models of play in the Django admin, read-only, and shown to a staff member
as the audit page would show them: the one decision (`rolls.reads.visibility.may_see`) with the
staff member's membership of the row's campaign, or as an observer sees it (`outsider`) when they
are not at that table. A hidden event is its sealed document (docs/verification.md, §3), a hidden
check a stub, and the rule state counts only the rolls they may see (`rolls.reads.known`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from django.contrib import admin
from django.db.models import Exists, OuterRef
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from campaign.models import Membership, Role
from eventlog.admin import ReadOnlyAdmin
from eventlog.chain import sealed_payload
from eventlog.models import Event
from rolls.models import (
    Check,
    CheckCall,
    RuleUse,
    TaskAttempts,
    VerificationCheckpoint,
    VerifiedSession,
)
from rolls.reads.known import failed_attempts, failed_attempts_of
from rolls.reads.present import shown_in_full
from rolls.reads.selectors import answers_seen, closed_seen
from rolls.reads.visibility import may_see, outsider

HIDDEN = _("hidden")
T = TypeVar("T")


def _once(request: HttpRequest, name: str, read: Callable[[], T]) -> T:
    """`read()`, once per request (a changelist asks for its queryset more than once)."""
    if not hasattr(request, name):
        setattr(request, name, read())
    return getattr(request, name)


def viewer_of(request: HttpRequest, campaign_id: int) -> Membership:
    """The signed-in staff member as a viewer of one campaign (their memberships read once per
    request)."""
    mine = _once(
        request,
        "_admin_memberships",
        lambda: {m.campaign_id: m for m in Membership.objects.filter(user_id=request.user.pk)},
    )
    return mine.get(campaign_id) or outsider(campaign_id)


class SeenByAdmin(ReadOnlyAdmin):
    """Rows shown as the signed-in staff member may see them: each row of the list and the
    object of the change view carry `viewer`, the membership they are shown to."""

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is not None:
            obj.viewer = viewer_of(request, obj.campaign_id)
        return obj

    def get_changelist_instance(self, request):
        changelist = super().get_changelist_instance(request)
        for obj in changelist.result_list:  # evaluated once; the template reads the same rows
            obj.viewer = viewer_of(request, obj.campaign_id)
        return changelist


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@admin.register(Event)
class EventAdmin(SeenByAdmin):
    list_display = ["campaign", "seq", "type", "actor", "visibility", "created_at", "short_hash"]
    # Named: the changelist's own select_related() follows only the non-null keys, and read each
    # row's actor in a statement of its own.
    list_select_related = ["campaign", "actor"]
    list_filter = ["type", "visibility"]
    # What an event's sealed document shows too (its payload and character are what it hides).
    lookup_fields = ("id", "campaign", "seq", "actor", "session_id", "scene_id", "chapter_id")
    search_fields = ["type"]
    ordering = ["campaign", "-seq"]
    readonly_fields = ["sealed"]
    public = ["campaign", "seq", "type", "actor", "created_at", "visibility"]
    periods = ["session_id", "scene_id", "chapter_id"]

    def get_fields(self, request, obj=None):
        if obj is None or shown_in_full(obj, obj.viewer):  # the feed's and the export's decision
            return [*self.public, *self.periods, "character_id", "payload", "prev_hash", "hash"]
        return [*self.public, *self.periods, "sealed", "prev_hash", "hash"]

    @admin.display(description=_("payload (sealed)"))
    def sealed(self, event: Event) -> str:
        character = None if event.character_id is None else str(event.character_id)
        return _json(sealed_payload(event.payload, character))

    @admin.display(description="hash")
    def short_hash(self, event: Event) -> str:
        return event.hash[:12]


@admin.register(Check)
class CheckAdmin(SeenByAdmin):
    list_display = ["campaign", "seq", "system", "kind", "known_outcome", "visibility", "revealed"]
    list_select_related = ["campaign"]  # and its event, which Check's manager joins
    list_filter = ["system", "kind", "visibility", "revealed"]
    # What a hidden check's stub shows (rolls.reads.present.present_check), and nothing else.
    stub = ["campaign", "event", "seq", "kind", "system", "visibility", "revealed", "actor_id"]
    lookup_fields = ("id", "campaign", "seq", "actor_id", "created_at")

    def get_fields(self, request, obj=None):
        if obj is None or may_see(obj, obj.viewer):
            return super().get_fields(request, obj)
        return [*self.stub, "created_at"]

    @admin.display(description=_("outcome"))
    def known_outcome(self, check: Check) -> str:
        return check.outcome if may_see(check, check.viewer) else HIDDEN


@admin.register(RuleUse)
class RuleUseAdmin(ReadOnlyAdmin):
    """The allowances taken by the rolls the staff member may see (`known_uses`' rule)."""

    list_display = ["campaign", "rule", "character_id", "period_id", "check_seq"]
    list_filter = ["rule"]

    def get_queryset(self, request):
        unseen = _once(request, "_admin_unseen_checks", lambda: self._unseen(request))
        rolled_unseen = Check.objects.filter(
            pk__in=unseen, campaign_id=OuterRef("campaign_id"), seq=OuterRef("check_seq")
        )
        return super().get_queryset(request).exclude(Exists(rolled_unseen))

    @staticmethod
    def _unseen(request: HttpRequest) -> list[int]:
        hidden = (
            Check.objects.filter(revealed=False)
            .exclude(visibility="public")
            .select_related(None)
            .only("pk", "campaign_id", "visibility", "revealed", "audience")
        )
        return [c.pk for c in hidden if not may_see(c, viewer_of(request, c.campaign_id))]


@admin.register(TaskAttempts)
class TaskAttemptsAdmin(SeenByAdmin):
    """Failed attempts at a task as the rules count them for the staff member
    (`rolls.reads.known.failed_attempts`); a task they know no failure at, while the table has
    some, is not listed (the row itself would tell of a hidden attempt)."""

    list_display = ["campaign", "character_id", "task", "known_failures"]
    list_select_related = ["campaign"]
    lookup_fields = ("campaign", "character_id", "task")
    fields = ["campaign", "character_id", "task", "known_failures"]
    readonly_fields = ["known_failures"]

    def get_queryset(self, request):
        rows = super().get_queryset(request)  # its campaign joined (list_select_related)
        known = _once(request, "_admin_known_tasks", lambda: self._known(request, rows))
        return rows.exclude(pk__in=[pk for pk, n in known.items() if n == 0])

    @staticmethod
    def _known(request: HttpRequest, rows) -> dict[int, int]:
        """What the staff member knows of each counter with failures in a campaign they do not
        run: all read at once, a fixed number of statements however many there are (a GM
        knows every failure of theirs; a counter they know none of is not listed)."""
        failed = [
            row
            for row in rows.filter(failures__gt=0)
            if viewer_of(request, row.campaign_id).role != Role.GM
        ]
        return failed_attempts_of(failed, lambda campaign_id: viewer_of(request, campaign_id))

    def get_changelist_instance(self, request):
        changelist = super().get_changelist_instance(request)
        rows = changelist.result_list
        known = dict(_once(request, "_admin_known_tasks", lambda: {}))  # get_queryset's
        missing = [row for row in rows if row.pk not in known]
        if missing:
            known |= failed_attempts_of(missing, lambda cid: viewer_of(request, cid))
        for row in rows:
            row.known = known[row.pk]
        return changelist

    @admin.display(description=_("failed attempts"))
    def known_failures(self, attempts: TaskAttempts) -> int:
        known = getattr(attempts, "known", None)  # a changelist's row: read with the others
        return _known_failures(attempts, attempts.viewer) if known is None else known


def _known_failures(attempts: TaskAttempts, viewer: Membership) -> int:
    return failed_attempts(
        campaign=attempts.campaign,
        character_id=attempts.character_id,
        task=attempts.task,
        viewer=viewer,
    )


@admin.register(CheckCall)
class CheckCallAdmin(SeenByAdmin):
    """A call's answers as the staff member may see them (`rolls.reads.selectors.answers_seen`):
    a hidden answer for another character is not tied to it here either."""

    list_display = ["campaign", "seq", "closed_shown"]
    fields = ["campaign", "seq", "character_ids", "request", "answers", "closed_shown"]
    readonly_fields = ["answers", "closed_shown"]

    def get_changelist_instance(self, request):
        changelist = super().get_changelist_instance(request)
        # Each campaign's rows' answers in one read, not one per row.
        by_campaign: dict[int, list[CheckCall]] = {}
        for call in changelist.result_list:
            by_campaign.setdefault(call.campaign_id, []).append(call)
        for calls in by_campaign.values():
            for call, seen in zip(calls, answers_seen(calls, calls[0].viewer), strict=True):
                call.seen_answers = seen
        return changelist

    @admin.display(description=_("answered"))
    def answers(self, call: CheckCall) -> str:
        return _json(_seen_answers(call))

    @admin.display(description=_("closed"), boolean=True)
    def closed_shown(self, call: CheckCall) -> bool:
        return closed_seen(call, call.viewer, _seen_answers(call))


def _seen_answers(call: CheckCall) -> dict[str, int | None]:
    """The call's answers as its viewer may see them, read once per call."""
    if not hasattr(call, "seen_answers"):
        call.seen_answers = answers_seen([call], call.viewer)[0]
    return call.seen_answers


@admin.register(VerificationCheckpoint)
class VerificationCheckpointAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "seq", "ok", "verified_at"]
    exclude = ["state"]  # the verifier's internal state: long, and not for reading here


@admin.register(VerifiedSession)
class VerifiedSessionAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "index"]
