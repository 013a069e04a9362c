"""Who may do what in a campaign: membership look-ups shared by services, views and consumers."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.utils.translation import gettext as _

from campaign.errors import NotAllowed, NotFound
from campaign.models import Campaign, Character, Membership, Role
from eventlog import rows

User = AbstractBaseUser | AnonymousUser


def membership_of(campaign: Campaign | int, user: User | None) -> Membership | None:
    if user is None or not user.is_authenticated:
        return None
    campaign_id = campaign if isinstance(campaign, int) else campaign.pk
    return Membership.objects.filter(campaign_id=campaign_id, user_id=user.pk).first()


# Set on a user read with their token: (campaign id, `member_with_campaign`'s answer), read in the
# same statement (accounts/authentication.py), so the request does not ask again.
_READ_WITH_TOKEN = "_member_read_with_token"


def member_with_campaign(campaign_id: int, user: User | None) -> tuple[Campaign, Membership] | None:
    """The campaign and the user's membership of it, in one hand-written query (every API
    request about a campaign asks it; with a token, the token's query asked it already); None
    for a non-member."""
    if user is None or not user.is_authenticated:
        return None
    read = getattr(user, _READ_WITH_TOKEN, None)
    if read is not None and read[0] == campaign_id:
        return read[1]
    found = rows.fetchone(
        f"SELECT {member_columns()} FROM {Membership._meta.db_table} m "
        f"JOIN {Campaign._meta.db_table} c ON c.id = m.campaign_id "
        "WHERE m.campaign_id = %s AND m.user_id = %s",
        (campaign_id, user.pk),
    )
    return None if found is None else _member(found)


def member_columns() -> str:
    """The columns `member_with_campaign` reads: the membership ``m`` and its campaign ``c``."""
    return f"{rows.columns(Membership, 'm')}, {rows.columns(Campaign, 'c')}"


def member_join(user: str) -> str:
    """`member_columns`' tables LEFT JOINed to a query's user ``user`` (one parameter: the
    campaign id), for a query that reads the user anyway."""
    return (
        f"LEFT JOIN {Membership._meta.db_table} m ON m.user_id = {user}.id AND m.campaign_id = %s "
        f"LEFT JOIN {Campaign._meta.db_table} c ON c.id = m.campaign_id"
    )


def remember_member(user: AbstractBaseUser, campaign_id: int, values: tuple) -> None:
    """Keep what a `member_join` read for ``user`` (the `member_columns` values)."""
    setattr(user, _READ_WITH_TOKEN, (campaign_id, _member(values)))


def _member(values: tuple) -> tuple[Campaign, Membership] | None:
    width = rows.width(Membership)
    membership = rows.instance(Membership, values[:width])
    if membership is None:
        return None
    campaign = rows.instance(Campaign, values[width:])
    membership.campaign = campaign
    return campaign, membership


def require_member(campaign: Campaign | int, user: User | None) -> Membership:
    """A non-member learns nothing, not even that the campaign exists: 404."""
    membership = membership_of(campaign, user)
    if membership is None:
        raise NotFound("campaign", _("no such campaign, or you are not a member of it"))
    return membership


def require_gm(campaign: Campaign | int, user: User | None) -> Membership:
    membership = require_member(campaign, user)
    if membership.role != Role.GM:
        raise NotAllowed("role", _("only a game master of this campaign may do this"))
    return membership


def require_player_or_gm(campaign: Campaign | int, user: User | None) -> Membership:
    return require_may_act(require_member(campaign, user))


def require_may_act(membership: Membership) -> Membership:
    """Players and GMs act in the game; observers watch it (403)."""
    if membership.role == Role.OBSERVER:
        raise NotAllowed("role", _("observers watch the game; they cannot act in it"))
    return membership


def controls_character(membership: Membership, character: Character) -> bool:
    """GMs act for every character; a player only for characters they own."""
    if membership.role == Role.GM:
        return True
    return membership.role == Role.PLAYER and character.owner_id == membership.user_id


def require_controls_character(membership: Membership, character: Character) -> None:
    if not controls_character(membership, character):
        raise NotAllowed("character", _("you can only act for your own characters"))
