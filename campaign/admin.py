"""The campaign's read models in the Django admin, read-only like the log they are projected from
(changes go through the services, which append events)."""

from __future__ import annotations

import json

from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from campaign.models import (
    Campaign,
    Chapter,
    Character,
    IdempotentRequest,
    Membership,
    Scene,
    Session,
    SessionSecret,
)
from eventlog.admin import ReadOnlyAdmin
from rolls.admin import SeenByAdmin
from rolls.reads.known import resources_for


@admin.register(Campaign)
class CampaignAdmin(ReadOnlyAdmin):
    list_display = ["id", "name", "system", "head_seq", "created_at"]
    exclude = ["invite_code"]


@admin.register(Membership)
class MembershipAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "user", "role", "joined_seq"]
    list_filter = ["role"]


@admin.register(Character)
class CharacterAdmin(SeenByAdmin):
    """A sheet's resources as the staff member may know them: what hidden rolls did to them (a
    Beat, Fortune spent) is left out, as on the pages (`rolls.reads.known.resources_for`)."""

    list_display = ["name", "campaign", "owner", "updated_seq"]
    search_fields = ["name"]
    lookup_fields = ("id", "campaign", "owner", "name")
    fields = ["name", "campaign", "owner", "traits", "known_resources", "favourites"]
    fields += ["created_seq", "updated_seq"]
    readonly_fields = ["known_resources"]

    @admin.display(description=_("resources"))
    def known_resources(self, character: Character) -> str:
        known = resources_for(character.viewer, [character])[str(character.pk)]
        return json.dumps(known, ensure_ascii=False, sort_keys=True)


@admin.register(Chapter, Session, Scene)
class PeriodAdmin(ReadOnlyAdmin):
    list_display = ["campaign", "number", "title", "started_at", "ended_at"]


@admin.register(SessionSecret)
class SessionSecretAdmin(ReadOnlyAdmin):
    """Listed so that nothing is hidden from the admin, but the seed itself is never shown:
    it is revealed by the session-ended event and not a moment before."""

    list_display = ["session_id", "campaign"]
    fields = ["session_id", "campaign"]


@admin.register(IdempotentRequest)
class IdempotentRequestAdmin(ReadOnlyAdmin):
    """The first answers kept for retries (campaign/idempotency.py); written with their writes."""

    list_display = ["created_at", "user", "campaign_id", "key", "status"]
    list_filter = ["status"]
    search_fields = ["key"]
    lookup_fields = ("user", "campaign_id", "created_at")
    # Not the answer itself: it is a roll as its requester was shown it (a GM's blind roll in
    # full), which a staff member at another seat of the table may not see.
    fields = ["created_at", "user", "campaign_id", "key", "status"]
