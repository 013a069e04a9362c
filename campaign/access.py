"""Who may do what in a campaign: membership look-ups shared by services, views and consumers."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.utils.translation import gettext as _

from campaign.errors import NotAllowed, NotFound
from campaign.models import Campaign, Character, Membership, Role

User = AbstractBaseUser | AnonymousUser


def membership_of(campaign: Campaign | int, user: User | None) -> Membership | None:
    if user is None or not user.is_authenticated:
        return None
    campaign_id = campaign if isinstance(campaign, int) else campaign.pk
    return Membership.objects.filter(campaign_id=campaign_id, user_id=user.pk).first()


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


def require_controls_character(membership: Membership, character: Character) -> None:
    """GMs act for every character; a player only for characters they own."""
    if membership.role == Role.GM:
        return
    if membership.role == Role.PLAYER and character.owner_id == membership.user_id:
        return
    raise NotAllowed("character", _("you can only act for your own characters"))
