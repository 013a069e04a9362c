"""Replayers of the campaign's own events (`eventlog.replay`): what `campaign.projectors` does to
the rows, done to the rows a rebuild keeps in memory."""

from __future__ import annotations

from uuid import UUID

from campaign.models import Chapter, Character, Membership, Scene, Session
from campaign.projectors import changed_resources
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
from eventlog.replay import Buffer, Replay, Replayed, replays


def characters(replay: Replay) -> Buffer:
    """The campaign's characters by id (`uuid.UUID`); shared with the checks' replayers."""
    return replay.buffer(Character)


@replays(CAMPAIGN_CREATED)
def _campaign_created(replay: Replay, event: Replayed) -> None:
    data = event.payload
    replay.owner_changes.update(name=data["name"], system=data["system"], options=data["options"])


@replays(CAMPAIGN_OPTIONS_CHANGED)
def _options_changed(replay: Replay, event: Replayed) -> None:
    replay.owner_changes["options"] = event.payload["options"]


@replays(CAMPAIGN_RENAMED)
def _renamed(replay: Replay, event: Replayed) -> None:
    replay.owner_changes["name"] = event.payload["name"]


@replays(MEMBER_JOINED)
def _member_joined(replay: Replay, event: Replayed) -> None:
    replay.owner_changes["roster_seq"] = event.seq
    user_id = event.payload["user_id"]
    replay.buffer(Membership).add(
        user_id,
        campaign_id=event.campaign_id,
        user_id=user_id,
        role=event.payload["role"],
        joined_seq=event.seq,
    )


@replays(MEMBER_ROLE_CHANGED)
def _member_role_changed(replay: Replay, event: Replayed) -> None:
    replay.owner_changes["roster_seq"] = event.seq
    member = replay.buffer(Membership).get(event.payload["user_id"])
    if member is not None:
        member["role"] = event.payload["role"]


@replays(MEMBER_LEFT)
def _member_left(replay: Replay, event: Replayed) -> None:
    replay.owner_changes["roster_seq"] = event.seq
    replay.buffer(Membership).remove(event.payload["user_id"])


@replays(CHARACTER_CREATED)
def _character_created(replay: Replay, event: Replayed) -> None:
    data = event.payload
    characters(replay).add(
        UUID(data["character_id"]),
        id=data["character_id"],
        campaign_id=event.campaign_id,
        owner_id=data["owner_id"],
        name=data["name"],
        traits=data["traits"],
        resources=data["resources"],
        created_seq=event.seq,
        updated_seq=event.seq,
    )


@replays(CHARACTER_CHANGED)
def _character_changed(replay: Replay, event: Replayed) -> None:
    data = event.payload
    character = characters(replay).get(UUID(data["character_id"]))
    if character is not None:
        character["updated_seq"] = event.seq
        character.update({key: data[key] for key in ("name", "owner_id", "traits") if key in data})
        if "resources" in data or "resource_changes" in data:
            character["resources"] = changed_resources(character["resources"], data)


@replays(CHARACTER_FAVOURITE_ADDED)
def _favourite_added(replay: Replay, event: Replayed) -> None:
    character = characters(replay).rows[UUID(event.payload["character_id"])]
    character["favourites"] = [*character["favourites"], event.payload["favourite"]]


@replays(CHARACTER_FAVOURITE_REMOVED)
def _favourite_removed(replay: Replay, event: Replayed) -> None:
    character = characters(replay).rows[UUID(event.payload["character_id"])]
    gone = event.payload["favourite_id"]
    character["favourites"] = [f for f in character["favourites"] if f["id"] != gone]


PeriodModel = type[Chapter] | type[Session] | type[Scene]


def _periods(replay: Replay, model: PeriodModel) -> Buffer:
    return replay.buffer(model, stored=("started_at", "ended_at"))  # the event's own times


def _period_started(replay: Replay, model: PeriodModel, event: Replayed) -> None:
    _periods(replay, model).add(
        UUID(event.payload["id"]),
        id=event.payload["id"],
        campaign_id=event.campaign_id,
        number=event.payload["number"],
        title=event.payload.get("title", ""),
        started_seq=event.seq,
        started_at=event.created_at,
    )


def _period_ended(replay: Replay, model: PeriodModel, event: Replayed) -> None:
    period = _periods(replay, model).get(UUID(event.payload["id"]))
    if period is not None:
        period["ended_seq"], period["ended_at"] = event.seq, event.created_at


@replays(CHAPTER_STARTED)
def _chapter_started(replay: Replay, event: Replayed) -> None:
    _period_started(replay, Chapter, event)


@replays(CHAPTER_ENDED)
def _chapter_ended(replay: Replay, event: Replayed) -> None:
    _period_ended(replay, Chapter, event)


@replays(SESSION_STARTED)
def _session_started(replay: Replay, event: Replayed) -> None:
    _period_started(replay, Session, event)


@replays(SESSION_ENDED)
def _session_ended(replay: Replay, event: Replayed) -> None:
    _period_ended(replay, Session, event)


@replays(SCENE_STARTED)
def _scene_started(replay: Replay, event: Replayed) -> None:
    _period_started(replay, Scene, event)


@replays(SCENE_ENDED)
def _scene_ended(replay: Replay, event: Replayed) -> None:
    _period_ended(replay, Scene, event)
