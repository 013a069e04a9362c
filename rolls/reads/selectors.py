"""Reads of the log for one member: what each participant may see, and in what shape.

The REST API and the WebSocket both present events through `present_events`, so a player sees
exactly the same thing over either: the full event when its visibility allows, otherwise a
redacted stub that keeps the seq (so feeds stay gapless) and says only that something happened.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth import get_user_model

from campaign.models import Event, Membership, Role
from eventlog.chain import GENESIS, timestamp
from eventlog.event_types import (
    CHECK_DRAMATIC_FAILURE_TAKEN,
    CHECK_EXTRA_NICE_TAKEN,
    CHECK_FORTUNE_SPENT,
    CHECK_ROLLED,
)
from rolls.models import Check

# Follow-ups and reveals point at the check they belong to; its visibility governs them.
CHECK_EVENT_TYPES = (
    CHECK_ROLLED,
    CHECK_DRAMATIC_FAILURE_TAKEN,
    CHECK_FORTUNE_SPENT,
    CHECK_EXTRA_NICE_TAKEN,
)


def _target_seq(event: Event) -> int | None:
    if event.type == CHECK_ROLLED:
        return event.seq
    if event.type in CHECK_EVENT_TYPES:
        return event.payload.get("check_seq")
    return None


def may_see(
    event: Event, membership: Membership, revealed: set[int], audience: dict[int, list[int]]
) -> bool:
    if membership.role == Role.GM or event.visibility == "public":
        return True
    target = _target_seq(event)
    if target is not None and target in revealed:
        return True
    if event.visibility == "private":
        return membership.user_id in audience.get(target or event.seq, [event.actor_id])
    return False  # blind: GMs only, until revealed


def present_events(events: Iterable[Event], membership: Membership) -> list[dict[str, Any]]:
    events = list(events)
    hidden_targets = {
        target
        for event in events
        if event.visibility != "public" and (target := _target_seq(event)) is not None
    }
    revealed: set[int] = set()
    audience: dict[int, list[int]] = {}
    if hidden_targets and membership.role != Role.GM:
        for seq, is_revealed, users in Check.objects.filter(
            campaign_id=membership.campaign_id, seq__in=hidden_targets
        ).values_list("seq", "revealed", "audience"):
            audience[seq] = users
            if is_revealed:
                revealed.add(seq)
    names = _usernames({event.actor_id for event in events})
    return [
        present(event, may_see(event, membership, revealed, audience), names.get(event.actor_id))
        for event in events
    ]


def _usernames(user_ids: set[int | None]) -> dict[int, str]:
    ids = {user_id for user_id in user_ids if user_id is not None}
    if not ids:
        return {}
    User = get_user_model()
    return dict(User.objects.filter(pk__in=ids).values_list("pk", User.USERNAME_FIELD))


def present(event: Event, visible: bool, actor_name: str | None) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "seq": event.seq,
        "type": event.type,
        "created_at": timestamp(event.created_at),
        "actor": {"id": event.actor_id, "username": actor_name},
        "visibility": event.visibility,
        # Safe on a stub too: a hidden event's hash covers a secret salt (eventlog.chain). Pages
        # keep the last one as a witness and check that later events link to it.
        "prev_hash": event.prev_hash,
        "hash": event.hash,
    }
    if not visible:
        shown["redacted"] = True
        return shown
    shown.update(
        redacted=False,
        session=_text(event.session_id),
        scene=_text(event.scene_id),
        chapter=_text(event.chapter_id),
        character=_text(event.character_id),
        payload=event.payload,
    )
    return shown


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def events_for(
    *,
    membership: Membership,
    after: int = 0,
    until: int | None = None,
    types: list[str] | None = None,
    session: str | None = None,
    chapter: str | None = None,
    character: str | None = None,
    limit: int = 200,
) -> list[dict[str, Any]]:
    """A page of the campaign's log after ``after``, as this member may see it."""
    events = Event.objects.filter(campaign_id=membership.campaign_id, seq__gt=after)
    if until is not None:
        events = events.filter(seq__lte=until)
    if types:
        events = events.filter(type__in=types)
    if session:
        events = events.filter(session_id=session)
    if chapter:
        events = events.filter(chapter_id=chapter)
    if character:
        events = events.filter(character_id=character)
    return present_events(events.order_by("seq")[:limit], membership)


def chain_holds(campaign_id: int, seq: int, hash: str) -> bool:
    """Does the campaign's log still have event ``seq`` with this hash (a witness's receipt)?"""
    if seq == 0:
        return hash == GENESIS
    stored = Event.objects.filter(campaign_id=campaign_id, seq=seq).values_list("hash", flat=True)
    return stored.first() == hash


def check_visible(check: Check, membership: Membership) -> bool:
    return (
        membership.role == Role.GM
        or check.visibility == "public"
        or check.revealed
        or (check.visibility == "private" and membership.user_id in check.audience)
    )


def resources_for(membership: Membership, characters: Iterable) -> dict[str, dict[str, int]]:
    """Each character's resources as this member may know them: what hidden rolls they may not
    see did (a Beat from a private dramatic failure, Fortune spent on a blind roll) is left out
    until the roll is revealed."""
    shown = {str(c.pk): dict(c.resources) for c in characters}
    if membership.role == Role.GM:
        return shown
    hidden = Check.objects.filter(campaign_id=membership.campaign_id).exclude(resource_changes={})
    for check in hidden.exclude(visibility="public").filter(revealed=False):
        if check_visible(check, membership):
            continue
        for character_id, changes in check.resource_changes.items():
            for name, delta in changes.items():
                if character_id in shown and name in shown[character_id]:
                    shown[character_id][name] -= delta
    return shown
