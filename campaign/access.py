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


def member_with_campaign(campaign_id: int, user: User | None) -> tuple[Campaign, Membership] | None:
    """The campaign and the user's membership of it, in one hand-written query (every API
    request about a campaign asks it); None for a non-member."""
    if user is None or not user.is_authenticated:
        return None
    width = rows.width(Membership)
    found = rows.fetchone(
        f"SELECT {rows.columns(Membership, 'm')}, {rows.columns(Campaign, 'c')} "
        f"FROM {Membership._meta.db_table} m JOIN {Campaign._meta.db_table} c "
        "ON c.id = m.campaign_id WHERE m.campaign_id = %s AND m.user_id = %s",
        (campaign_id, user.pk),
    )
    if found is None:
        return None
    membership = rows.instance(Membership, found[:width])
    campaign = rows.instance(Campaign, found[width:])
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
