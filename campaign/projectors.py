"""Projectors for the campaign's own events (membership, characters, chapters, sessions)."""

from __future__ import annotations

from typing import Any

from campaign.models import Campaign, Chapter, Character, Membership, Scene, Session
from eventlog.event_types import (
    CAMPAIGN_CREATED,
    CAMPAIGN_OPTIONS_CHANGED,
    CAMPAIGN_RENAMED,
    CHAPTER_ENDED,
    CHAPTER_STARTED,
    CHARACTER_CHANGED,
    CHARACTER_CREATED,
    CHARACTER_FAVOURITE_ADDED,
    CHARACTER_FAVOURITE_REMOVED,
    MEMBER_JOINED,
    MEMBER_LEFT,
    MEMBER_ROLE_CHANGED,
    SCENE_ENDED,
    SCENE_STARTED,
    SESSION_ENDED,
    SESSION_STARTED,
)
from eventlog.models import Event
from eventlog.projections import projects, register_read_models

register_read_models(Membership, Character, Chapter, Session, Scene)


@projects(CAMPAIGN_CREATED)
def _campaign_created(event: Event) -> None:
    data = event.payload
    Campaign.objects.filter(pk=event.campaign_id).update(
        name=data["name"], system=data["system"], options=data["options"]
    )


@projects(CAMPAIGN_OPTIONS_CHANGED)
def _options_changed(event: Event) -> None:
    Campaign.objects.filter(pk=event.campaign_id).update(options=event.payload["options"])


@projects(CAMPAIGN_RENAMED)
def _renamed(event: Event) -> None:
    Campaign.objects.filter(pk=event.campaign_id).update(name=event.payload["name"])


def _roster_changed(event: Event) -> None:
    Campaign.objects.filter(pk=event.campaign_id).update(roster_seq=event.seq)


@projects(MEMBER_JOINED)
def _member_joined(event: Event) -> None:
    _roster_changed(event)
    Membership.objects.create(
        campaign_id=event.campaign_id,
        user_id=event.payload["user_id"],
        role=event.payload["role"],
        joined_seq=event.seq,
    )


@projects(MEMBER_ROLE_CHANGED)
def _member_role_changed(event: Event) -> None:
    _roster_changed(event)
    Membership.objects.filter(
        campaign_id=event.campaign_id, user_id=event.payload["user_id"]
    ).update(role=event.payload["role"])


@projects(MEMBER_LEFT)
def _member_left(event: Event) -> None:
    _roster_changed(event)
    Membership.objects.filter(
        campaign_id=event.campaign_id, user_id=event.payload["user_id"]
    ).delete()


@projects(CHARACTER_CREATED)
def _character_created(event: Event) -> None:
    data = event.payload
    Character.objects.create(
        id=data["character_id"],
        campaign_id=event.campaign_id,
        owner_id=data["owner_id"],
        name=data["name"],
        traits=data["traits"],
        resources=data["resources"],
        created_seq=event.seq,
        updated_seq=event.seq,
    )


@projects(CHARACTER_CHANGED)
def _character_changed(event: Event) -> None:
    data = event.payload
    fields = {key: data[key] for key in ("name", "owner_id", "traits") if key in data}
    if "resources" in data or "resource_changes" in data:
        current = Character.objects.values_list("resources", flat=True).get(pk=data["character_id"])
        fields["resources"] = changed_resources(current, data)
    Character.objects.filter(pk=data["character_id"]).update(updated_seq=event.seq, **fields)


@projects(CHARACTER_FAVOURITE_ADDED)
def _favourite_added(event: Event) -> None:
    character = Character.objects.get(pk=event.payload["character_id"])
    character.favourites = [*character.favourites, event.payload["favourite"]]
    character.save(update_fields=["favourites"])


@projects(CHARACTER_FAVOURITE_REMOVED)
def _favourite_removed(event: Event) -> None:
    character = Character.objects.get(pk=event.payload["character_id"])
    gone = event.payload["favourite_id"]
    character.favourites = [f for f in character.favourites if f["id"] != gone]
    character.save(update_fields=["favourites"])


def _period_started(model: type[Chapter] | type[Session] | type[Scene], event: Event) -> None:
    model.objects.create(
        id=event.payload["id"],
        campaign_id=event.campaign_id,
        number=event.payload["number"],
        title=event.payload.get("title", ""),
        started_seq=event.seq,
        started_at=event.created_at,
    )


def _period_ended(model: type[Chapter] | type[Session] | type[Scene], event: Event) -> None:
    model.objects.filter(pk=event.payload["id"]).update(
        ended_seq=event.seq, ended_at=event.created_at
    )


@projects(CHAPTER_STARTED)
def _chapter_started(event: Event) -> None:
    _period_started(Chapter, event)


@projects(CHAPTER_ENDED)
def _chapter_ended(event: Event) -> None:
    _period_ended(Chapter, event)


@projects(SESSION_STARTED)
def _session_started(event: Event) -> None:
    _period_started(Session, event)


@projects(SESSION_ENDED)
def _session_ended(event: Event) -> None:
    _period_ended(Session, event)


@projects(SCENE_STARTED)
def _scene_started(event: Event) -> None:
    _period_started(Scene, event)


@projects(SCENE_ENDED)
def _scene_ended(event: Event) -> None:
    _period_ended(Scene, event)


def changed_resources(current: dict[str, int], payload: dict[str, Any]) -> dict[str, int]:
    """A sheet's resources after a `character.changed`: the GM's changes added up, or (an event
    logged before the changes were) the values it set."""
    resources = {**current, **payload.get("resources", {})}
    for name, change in payload.get("resource_changes", {}).items():
        resources[name] = resources.get(name, 0) + change
    return resources
