"""Writes to a campaign: each service validates, takes the stream lock and appends events.

Keyword-only, one transaction each; REST views, the WebSocket consumer and management commands all
call these. Errors are `campaign.errors.DomainError` subclasses naming the offending field.
"""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaign.access import require_controls_character, require_gm, require_member
from campaign.errors import Conflict, InvalidInput, NotAllowed, NotFound, call_rules
from campaign.limits import MAX_SHEET_BYTES, check_stored_size
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
from eventlog.stream import append_event, lock_stream
from rolls.systems import SYSTEM_IDS, key_commitment, roll_key, rollbox
from rolls.systems.options import validate_options
from rolls.systems.traits import trait_changes, validate_resources, validate_traits

MAX_NAME = 100
MAX_ROLL_LINE = rollbox.MAX_TEXT
UNCHANGED = object()
STILL_OPEN = {
    "chapter": gettext_lazy("chapter {n} is still open; end it before starting another"),
    "session": gettext_lazy("session {n} is still open; end it before starting another"),
    "scene": gettext_lazy("scene {n} is still open; end it before starting another"),
}
NONE_OPEN = {
    "chapter": gettext_lazy("no chapter is open"),
    "session": gettext_lazy("no session is open"),
    "scene": gettext_lazy("no scene is open"),
}
PeriodModel = (
    type[Chapter] | type[Session] | type[Scene]
)  # "leave this field as it is", where None is a meaningful value


def _clean_name(value: Any, field: str = "name", max_length: int = MAX_NAME) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field, _("must be non-empty text"))
    if len(value.strip()) > max_length:
        raise InvalidInput(field, _("must be at most {n} characters").format(n=max_length))
    if "\x00" in value:  # PostgreSQL's jsonb cannot hold it: refused here, not a 500 there
        raise InvalidInput(field, _("must not contain NUL characters"))
    return value.strip()


@transaction.atomic
def create_campaign(
    *, name: str, system: str, created_by: AbstractBaseUser, options: dict | None = None
) -> Campaign:
    name = _clean_name(name)
    if system not in SYSTEM_IDS:
        raise InvalidInput(
            "system",
            _("unknown game system {system}; one of {known}").format(
                system=repr(system), known=", ".join(SYSTEM_IDS)
            ),
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
        raise NotFound(
            "invite_code", _("no campaign has this invite code (it may have been renewed)")
        )
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
        raise InvalidInput("role", _("must be one of {roles}").format(roles=", ".join(Role.values)))
    campaign = lock_stream(campaign.pk)
    membership = Membership.objects.filter(campaign=campaign, user_id=user_id).first()
    if membership is None:
        raise NotFound("user_id", _("this user is not a member of the campaign"))
    if membership.role == Role.GM and role != Role.GM and _gm_count(campaign) == 1:
        raise Conflict("role", _("the campaign's last game master cannot step down"))
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
    """A member leaves, or a GM removes a member. A removal also renews the invite code, so the
    removed member cannot come back with the link they had; the GM shares the new one with
    whoever should (re)join."""
    actor_membership = require_member(campaign, actor)
    if user_id != actor.pk and actor_membership.role != Role.GM:
        raise NotAllowed("user_id", _("only a game master can remove another member"))
    campaign = lock_stream(campaign.pk)
    membership = Membership.objects.filter(campaign=campaign, user_id=user_id).first()
    if membership is None:
        raise NotFound("user_id", _("this user is not a member of the campaign"))
    _member_leaves(campaign, membership, actor_id=actor.pk)
    if user_id != actor.pk:
        campaign.invite_code = new_invite_code()
        campaign.save(update_fields=["invite_code"])


def _member_leaves(campaign: Campaign, membership: Membership, *, actor_id: int) -> None:
    """`member.left`, unless it would leave the campaign without a GM (stream lock held)."""
    if membership.role == Role.GM and _gm_count(campaign) == 1:
        raise Conflict("user_id", _("the campaign's last game master cannot leave"))
    append_event(
        campaign=campaign,
        type=MEMBER_LEFT,
        payload={"user_id": membership.user_id},
        actor_id=actor_id,
    )


@transaction.atomic
def remove_account(*, campaign: Campaign, user_id: int, by: AbstractBaseUser) -> None:
    """An account is being deleted (accounts.deletion): the characters it owns in the campaign
    are kept with no owner, then it leaves, each an event written by the staff member `by`
    (who need not be a member), so that the log alone still rebuilds the table. Called for a
    campaign where the account is a member or owns a character (one who left keeps theirs); the
    campaign's last GM is refused, with nothing written."""
    campaign = lock_stream(campaign.pk)
    membership = Membership.objects.filter(campaign=campaign, user_id=user_id).first()
    for character in Character.objects.filter(campaign=campaign, owner_id=user_id):
        append_event(
            campaign=campaign,
            type=CHARACTER_CHANGED,
            payload={"character_id": str(character.pk), "owner_id": None},
            actor_id=by.pk,
            character_id=character.pk,
        )
    if membership is not None:
        _member_leaves(campaign, membership, actor_id=by.pk)


def _check_owner(campaign: Campaign, owner_id: int | None) -> None:
    if (
        owner_id is not None
        and not Membership.objects.filter(campaign=campaign, user_id=owner_id)
        .exclude(role=Role.OBSERVER)
        .exists()
    ):
        raise InvalidInput("owner_id", _("the owner must be a player or GM of this campaign"))


def _small_sheet(campaign: Campaign, traits: Any) -> dict[str, Any]:
    clean = call_rules(validate_traits, campaign.system, traits)
    check_stored_size(clean, "traits", MAX_SHEET_BYTES)  # kept in the log for good
    return clean


def _sheet_fields(
    campaign: Campaign,
    *,
    name: Any = UNCHANGED,
    traits: Any = None,
    resources: Any = None,
    starting: bool = False,
) -> dict[str, Any]:
    """Validate a sheet's name, traits and resources together: every bad field is reported in
    one answer, so a form can mark them all at once."""
    clean: dict[str, Any] = {}
    errors: dict[str, str] = {}
    checks: list[tuple[str, Any]] = []
    if name is not UNCHANGED:
        checks.append(("name", lambda: _clean_name(name)))
    if traits is not None:
        checks.append(("traits", lambda: _small_sheet(campaign, traits)))
    if resources is not None:
        checks.append(
            (
                "resources",
                lambda: call_rules(
                    validate_resources, campaign.system, resources, starting=starting
                ),
            )
        )
    for key, check in checks:
        try:
            clean[key] = check()
        except InvalidInput as error:
            errors.update(error.errors)
    if errors:
        field, message = next(iter(errors.items()))
        raise InvalidInput(field, message, errors=errors)
    return clean


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
    """Players create their own characters, with their starting resources (within the
    system's starting maximum); GMs create anyone's (or NPCs with no owner)."""
    membership = require_member(campaign, actor)
    if membership.role == Role.OBSERVER:
        raise NotAllowed("role", _("observers cannot create characters"))
    starting = membership.role == Role.PLAYER
    if starting:
        if owner_id not in (None, actor.pk):
            raise NotAllowed("owner_id", _("players create their own characters"))
        owner_id = actor.pk
    clean = _sheet_fields(
        campaign, name=name, traits=traits, resources=resources or {}, starting=starting
    )
    campaign = lock_stream(campaign.pk)
    _check_owner(campaign, owner_id)
    character_id = uuid.uuid4()
    append_event(
        campaign=campaign,
        type=CHARACTER_CREATED,
        payload={
            "character_id": str(character_id),
            "owner_id": owner_id,
            "name": clean["name"],
            "traits": clean["traits"],
            "resources": clean["resources"],
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
    """Owners edit name and traits; after creation, resources (Beats, Fortune…) and ownership
    are the GM's. A trait change records what changed, and whether a session was open, so the
    GM's feed shows a player's mid-session edit."""
    membership = require_member(campaign, actor)
    require_controls_character(membership, character)
    if membership.role != Role.GM and (resources is not None or owner_id is not UNCHANGED):
        raise NotAllowed("resources", _("only a game master changes resources or ownership"))
    merged = None if resources is None else {**character.resources, **resources}
    changes = _sheet_fields(
        campaign,
        name=UNCHANGED if name is None else name,
        traits=traits,
        resources=merged,
    )
    campaign = lock_stream(campaign.pk)
    if owner_id is not UNCHANGED:
        _check_owner(campaign, owner_id)
        changes["owner_id"] = owner_id
    character = Character.objects.get(pk=character.pk)
    if resources is not None:
        # What the GM set, as changes to the sheet as it stands under the lock (a roll may have
        # spent Willpower since the form was read): the event is public, and the sheet holds
        # what hidden rolls did (a Beat, Fortune spent), which the sheets show only to those
        # who may see them. A change tells the table nothing of those ("Beats 2" on a sheet it
        # sees at 0 told it of a hidden Beat; "+1" does not). The projectors add them up.
        wanted = changes.pop("resources")
        changes["resource_changes"] = {
            name: wanted[name] - character.resources.get(name, 0)
            for name in resources
            if character.resources.get(name, 0) != wanted[name]
        }
    changes = {
        key: value
        for key, value in changes.items()
        if (value != {} if key == "resource_changes" else getattr(character, key) != value)
    }
    if changes:
        payload: dict[str, Any] = {"character_id": str(character.pk), **changes}
        if "traits" in changes:
            payload["diff"] = trait_changes(character.traits, changes["traits"])
            payload["during_session"] = Session.open_in(campaign) is not None
        append_event(
            campaign=campaign,
            type=CHARACTER_CHANGED,
            payload=payload,
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


MAX_FAVOURITES = 20
MAX_FAVOURITE_NAME = 60


@transaction.atomic
def add_favourite(
    *, campaign: Campaign, actor: AbstractBaseUser, character: Character, name: str, text: str
) -> dict[str, str]:
    """Save a line of the roll box for a character; it must read for that character's sheet."""
    membership = require_member(campaign, actor)
    require_controls_character(membership, character)
    text = _clean_name(text, "text", MAX_ROLL_LINE)
    name = _clean_name(name or text[:MAX_FAVOURITE_NAME], "name", MAX_FAVOURITE_NAME)
    campaign = lock_stream(campaign.pk)
    character = Character.objects.get(pk=character.pk)
    call_rules(rollbox.parse, campaign.system, text, sheet=character.traits)
    if len(character.favourites) >= MAX_FAVOURITES:
        raise Conflict(
            "favourites",
            _("a character keeps at most {n} favourite rolls").format(n=MAX_FAVOURITES),
        )
    favourite = {"id": str(uuid.uuid4()), "name": name, "text": text}
    append_event(
        campaign=campaign,
        type=CHARACTER_FAVOURITE_ADDED,
        payload={"character_id": str(character.pk), "favourite": favourite},
        actor_id=actor.pk,
        character_id=character.pk,
    )
    return favourite


@transaction.atomic
def remove_favourite(
    *, campaign: Campaign, actor: AbstractBaseUser, character: Character, favourite_id: Any
) -> None:
    membership = require_member(campaign, actor)
    require_controls_character(membership, character)
    campaign = lock_stream(campaign.pk)
    character = Character.objects.get(pk=character.pk)
    if str(favourite_id) not in {f["id"] for f in character.favourites}:
        raise NotFound("favourite", _("this character has no such favourite roll"))
    append_event(
        campaign=campaign,
        type=CHARACTER_FAVOURITE_REMOVED,
        payload={"character_id": str(character.pk), "favourite_id": str(favourite_id)},
        actor_id=actor.pk,
        character_id=character.pk,
    )


def _start_period(
    model: PeriodModel, *, campaign: Campaign, actor: AbstractBaseUser, title: str
) -> Chapter | Session | Scene:
    require_gm(campaign, actor)
    kind = model.__name__.lower()
    title = (title or "").strip() if isinstance(title, str | None) else title
    if not isinstance(title, str) or len(title) > 200:
        raise InvalidInput("title", _("must be text of at most {n} characters").format(n=200))
    if "\x00" in title:
        raise InvalidInput("title", _("must not contain NUL characters"))
    campaign = lock_stream(campaign.pk)
    current = model.open_in(campaign)
    if current is not None:
        raise Conflict(kind, str(STILL_OPEN[kind]).format(n=current.number))
    number = model.objects.filter(campaign=campaign).count() + 1
    period_id = uuid.uuid4()
    payload: dict[str, Any] = {"id": str(period_id), "number": number, "title": title}
    if model is Session:
        # Commit to the first roll's key before anything is rolled (each roll commits to the
        # next): the seed itself is never published, so unrevealed hidden rolls stay secret.
        seed = secrets.token_bytes(32)
        SessionSecret.objects.create(session_id=period_id, campaign=campaign, seed=seed)
        payload["key_commitment"] = key_commitment(roll_key(seed, 0))
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
        raise Conflict(kind, str(NONE_OPEN[kind]))
    payload: dict[str, Any] = {"id": str(current.pk), "number": current.number}
    if model is Session:
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
