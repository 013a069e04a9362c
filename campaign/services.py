"""Writes to a campaign: each service validates, takes the stream lock and appends events.

Keyword-only, one transaction each; REST views, the WebSocket consumer and management commands all
call these. Errors are `campaign.errors.DomainError` subclasses naming the offending field.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from campaign.access import require_controls_character, require_gm, require_member
from campaign.errors import Conflict, InvalidInput, NotAllowed, NotFound, call_rules
from campaign.models import (
    Campaign,
    Chapter,
    Character,
    Membership,
    Role,
    Scene,
    Session,
    SessionSecret,
    new_invite_code,
)
from eventlog.event_types import (
    CAMPAIGN_CREATED,
    CAMPAIGN_OPTIONS_CHANGED,
    CAMPAIGN_RENAMED,
    CHAPTER_ENDED,
    CHAPTER_STARTED,
    CHARACTER_CHANGED,
    CHARACTER_CREATED,
    MEMBER_JOINED,
    MEMBER_LEFT,
    MEMBER_ROLE_CHANGED,
    SCENE_ENDED,
    SCENE_STARTED,
    SESSION_ENDED,
    SESSION_STARTED,
)
from eventlog.stream import append_event, lock_stream
from rolls.systems import SYSTEM_IDS
from rolls.systems.options import validate_options
from rolls.systems.traits import validate_resources, validate_traits

MAX_NAME = 120
UNCHANGED = object()
PeriodModel = (
    type[Chapter] | type[Session] | type[Scene]
)  # "leave this field as it is", where None is a meaningful value


def _clean_name(value: Any, field: str = "name", max_length: int = MAX_NAME) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field, "must be non-empty text")
    if len(value.strip()) > max_length:
        raise InvalidInput(field, f"must be at most {max_length} characters")
    return value.strip()


@transaction.atomic
def create_campaign(
    *, name: str, system: str, created_by: AbstractBaseUser, options: dict | None = None
) -> Campaign:
    name = _clean_name(name)
    if system not in SYSTEM_IDS:
        raise InvalidInput(
            "system", f"unknown game system {system!r}; one of {', '.join(SYSTEM_IDS)}"
        )
    clean_options = call_rules(validate_options, system, options or {})
    campaign = Campaign.objects.create(name=name, system=system, options=clean_options)
    lock_stream(campaign.pk)
    append_event(
        campaign=campaign,
        type=CAMPAIGN_CREATED,
        payload={"name": name, "system": system, "options": clean_options},
        actor_id=created_by.pk,
    )
    append_event(
        campaign=campaign,
        type=MEMBER_JOINED,
        payload={"user_id": created_by.pk, "username": created_by.get_username(), "role": Role.GM},
        actor_id=created_by.pk,
    )
    return campaign


@transaction.atomic
def change_options(*, campaign: Campaign, actor: AbstractBaseUser, changes: dict) -> Campaign:
    require_gm(campaign, actor)
    campaign = lock_stream(campaign.pk)
    options = call_rules(validate_options, campaign.system, changes, campaign.options)
    if options != campaign.options:
        append_event(
            campaign=campaign,
            type=CAMPAIGN_OPTIONS_CHANGED,
            payload={"options": options, "changes": changes},
            actor_id=actor.pk,
        )
        campaign.options = options
    return campaign


@transaction.atomic
def rename_campaign(*, campaign: Campaign, actor: AbstractBaseUser, name: str) -> Campaign:
    require_gm(campaign, actor)
    name = _clean_name(name)
    campaign = lock_stream(campaign.pk)
    if name != campaign.name:
        append_event(
            campaign=campaign, type=CAMPAIGN_RENAMED, payload={"name": name}, actor_id=actor.pk
        )
        campaign.name = name
    return campaign


@transaction.atomic
def regenerate_invite(*, campaign: Campaign, actor: AbstractBaseUser) -> Campaign:
    """A new invite link (the old one stops working). Not play, so not an event."""
    require_gm(campaign, actor)
    campaign = lock_stream(campaign.pk)
    campaign.invite_code = new_invite_code()
    campaign.save(update_fields=["invite_code"])
    return campaign


@transaction.atomic
def join_campaign(*, invite_code: str, user: AbstractBaseUser) -> Membership:
    """Join as a player by invite code; joining again is a no-op that returns the membership."""
    campaign = Campaign.objects.filter(invite_code=invite_code).first() if invite_code else None
    if campaign is None:
        raise NotFound("invite_code", "no campaign has this invite code (it may have been renewed)")
    campaign = lock_stream(campaign.pk)
    existing = Membership.objects.filter(campaign=campaign, user_id=user.pk).first()
    if existing:
        return existing
    append_event(
        campaign=campaign,
        type=MEMBER_JOINED,
        payload={"user_id": user.pk, "username": user.get_username(), "role": Role.PLAYER},
        actor_id=user.pk,
    )
    return Membership.objects.get(campaign=campaign, user_id=user.pk)


def _gm_count(campaign: Campaign) -> int:
    return Membership.objects.filter(campaign=campaign, role=Role.GM).count()


@transaction.atomic
def change_role(
    *, campaign: Campaign, actor: AbstractBaseUser, user_id: int, role: str
) -> Membership:
    require_gm(campaign, actor)
    if role not in Role.values:
        raise InvalidInput("role", f"must be one of {', '.join(Role.values)}")
    campaign = lock_stream(campaign.pk)
    membership = Membership.objects.filter(campaign=campaign, user_id=user_id).first()
    if membership is None:
        raise NotFound("user_id", "this user is not a member of the campaign")
    if membership.role == Role.GM and role != Role.GM and _gm_count(campaign) == 1:
        raise Conflict("role", "the campaign's last game master cannot step down")
    if membership.role != role:
        append_event(
            campaign=campaign,
            type=MEMBER_ROLE_CHANGED,
            payload={"user_id": user_id, "role": role},
            actor_id=actor.pk,
        )
        membership.role = role
    return membership


@transaction.atomic
def leave_campaign(*, campaign: Campaign, actor: AbstractBaseUser, user_id: int) -> None:
    """A member leaves, or a GM removes a member."""
    actor_membership = require_member(campaign, actor)
    if user_id != actor.pk and actor_membership.role != Role.GM:
        raise NotAllowed("user_id", "only a game master can remove another member")
    campaign = lock_stream(campaign.pk)
    membership = Membership.objects.filter(campaign=campaign, user_id=user_id).first()
    if membership is None:
        raise NotFound("user_id", "this user is not a member of the campaign")
    if membership.role == Role.GM and _gm_count(campaign) == 1:
        raise Conflict("user_id", "the campaign's last game master cannot leave")
    append_event(
        campaign=campaign, type=MEMBER_LEFT, payload={"user_id": user_id}, actor_id=actor.pk
    )


def _check_owner(campaign: Campaign, owner_id: int | None) -> None:
    if (
        owner_id is not None
        and not Membership.objects.filter(campaign=campaign, user_id=owner_id)
        .exclude(role=Role.OBSERVER)
        .exists()
    ):
        raise InvalidInput("owner_id", "the owner must be a player or GM of this campaign")


@transaction.atomic
def create_character(
    *,
    campaign: Campaign,
    actor: AbstractBaseUser,
    name: str,
    traits: dict,
    resources: dict | None = None,
    owner_id: int | None = None,
) -> Character:
    """Players create their own characters; GMs create anyone's (or NPCs with no owner)."""
    membership = require_member(campaign, actor)
    if membership.role == Role.OBSERVER:
        raise NotAllowed("role", "observers cannot create characters")
    if membership.role == Role.PLAYER:
        if owner_id not in (None, actor.pk) or resources:
            raise NotAllowed(
                "owner_id", "players create their own characters; the GM sets resources"
            )
        owner_id = actor.pk
    name = _clean_name(name)
    clean_traits = call_rules(validate_traits, campaign.system, traits)
    clean_resources = call_rules(validate_resources, campaign.system, resources or {})
    campaign = lock_stream(campaign.pk)
    _check_owner(campaign, owner_id)
    character_id = uuid.uuid4()
    append_event(
        campaign=campaign,
        type=CHARACTER_CREATED,
        payload={
            "character_id": str(character_id),
            "owner_id": owner_id,
            "name": name,
            "traits": clean_traits,
            "resources": clean_resources,
        },
        actor_id=actor.pk,
        character_id=character_id,
    )
    return Character.objects.get(pk=character_id)


@transaction.atomic
def change_character(
    *,
    campaign: Campaign,
    actor: AbstractBaseUser,
    character: Character,
    name: str | None = None,
    traits: dict | None = None,
    resources: dict | None = None,
    owner_id: int | object | None = UNCHANGED,
) -> Character:
    """Owners edit name and traits; resources (Beats, Fortune…) and ownership are the GM's."""
    membership = require_member(campaign, actor)
    require_controls_character(membership, character)
    if membership.role != Role.GM and (resources is not None or owner_id is not UNCHANGED):
        raise NotAllowed("resources", "only a game master changes resources or ownership")
    changes: dict[str, Any] = {}
    if name is not None:
        changes["name"] = _clean_name(name)
    if traits is not None:
        changes["traits"] = call_rules(validate_traits, campaign.system, traits)
    if resources is not None:
        changes["resources"] = call_rules(
            validate_resources, campaign.system, {**character.resources, **resources}
        )
    campaign = lock_stream(campaign.pk)
    if owner_id is not UNCHANGED:
        _check_owner(campaign, owner_id)
        changes["owner_id"] = owner_id
    character = Character.objects.get(pk=character.pk)
    changes = {key: value for key, value in changes.items() if getattr(character, key) != value}
    if changes:
        append_event(
            campaign=campaign,
            type=CHARACTER_CHANGED,
            payload={"character_id": str(character.pk), **changes},
            actor_id=actor.pk,
            character_id=character.pk,
        )
        character.refresh_from_db()
    return character


# Each period's (started, ended) event types.
PERIOD_EVENTS = {
    Chapter: (CHAPTER_STARTED, CHAPTER_ENDED),
    Session: (SESSION_STARTED, SESSION_ENDED),
    Scene: (SCENE_STARTED, SCENE_ENDED),
}


def _start_period(
    model: PeriodModel, *, campaign: Campaign, actor: AbstractBaseUser, title: str
) -> Chapter | Session | Scene:
    require_gm(campaign, actor)
    kind = model.__name__.lower()
    title = (title or "").strip() if isinstance(title, str | None) else title
    if not isinstance(title, str) or len(title) > 200:
        raise InvalidInput("title", "must be text of at most 200 characters")
    campaign = lock_stream(campaign.pk)
    current = model.open_in(campaign)
    if current is not None:
        raise Conflict(
            kind, f"{kind} {current.number} is still open; end it before starting another"
        )
    number = model.objects.filter(campaign=campaign).count() + 1
    period_id = uuid.uuid4()
    payload: dict[str, Any] = {"id": str(period_id), "number": number, "title": title}
    if model is Session:
        # Commit to the dice before any are rolled: only the seed's hash is published now.
        seed = secrets.token_bytes(32)
        SessionSecret.objects.create(session_id=period_id, campaign=campaign, seed=seed)
        payload["seed_commitment"] = hashlib.sha256(seed).hexdigest()
    append_event(
        campaign=campaign,
        type=PERIOD_EVENTS[model][0],
        payload=payload,
        actor_id=actor.pk,
        **{f"{kind}_id": period_id},
    )
    return model.objects.get(pk=period_id)


def _end_period(
    model: PeriodModel, *, campaign: Campaign, actor: AbstractBaseUser
) -> Chapter | Session | Scene:
    require_gm(campaign, actor)
    kind = model.__name__.lower()
    campaign = lock_stream(campaign.pk)
    current = model.open_in(campaign)
    if current is None:
        raise Conflict(kind, f"no {kind} is open")
    payload: dict[str, Any] = {"id": str(current.pk), "number": current.number}
    if model is Session:
        # The reveal: from now on anyone can recompute every server-rolled face of the session.
        secret = SessionSecret.objects.get(session_id=current.pk)
        payload["seed"] = bytes(secret.seed).hex()
        # The receipt: the chain hash of the session's last event before this one, which fixes
        # the whole history up to it; participants keep it to check later exports against.
        payload["final_seq"], payload["final_hash"] = campaign.head_seq, campaign.head_hash
    append_event(
        campaign=campaign,
        type=PERIOD_EVENTS[model][1],
        payload=payload,
        actor_id=actor.pk,
        **{f"{kind}_id": current.pk},
    )
    current.refresh_from_db()
    return current


@transaction.atomic
def start_chapter(*, campaign: Campaign, actor: AbstractBaseUser, title: str = "") -> Chapter:
    return _start_period(Chapter, campaign=campaign, actor=actor, title=title)


@transaction.atomic
def end_chapter(*, campaign: Campaign, actor: AbstractBaseUser) -> Chapter:
    return _end_period(Chapter, campaign=campaign, actor=actor)


@transaction.atomic
def start_session(*, campaign: Campaign, actor: AbstractBaseUser, title: str = "") -> Session:
    return _start_period(Session, campaign=campaign, actor=actor, title=title)


@transaction.atomic
def end_session(*, campaign: Campaign, actor: AbstractBaseUser) -> Session:
    return _end_period(Session, campaign=campaign, actor=actor)


@transaction.atomic
def start_scene(*, campaign: Campaign, actor: AbstractBaseUser, title: str = "") -> Scene:
    return _start_period(Scene, campaign=campaign, actor=actor, title=title)


@transaction.atomic
def end_scene(*, campaign: Campaign, actor: AbstractBaseUser) -> Scene:
    return _end_period(Scene, campaign=campaign, actor=actor)
