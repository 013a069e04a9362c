"""Deleting an account without deleting history: before the user row goes, each campaign the
account is tied to records, in its own log, that the account's characters lost their owner and
that the account left (`campaign.services.remove_account`). A raw delete cannot skip this:
memberships and owned characters PROTECT the user row.

The campaign's last game master cannot be deleted (the table would have nobody to run it):
another member is made a GM first. Deleting several accounts is all or nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, Q
from django.utils.translation import gettext as _

from campaign.errors import Conflict
from campaign.models import Campaign, Character, Membership, Role
from campaign.services import remove_account
from eventlog.stream import lock_stream


@dataclass
class Ties:
    """What deleting one account does to the campaigns (a selector's answer; read under the
    stream locks by `delete_users`, without them for the admin's confirmation page)."""

    user: AbstractBaseUser
    leaves: list[Campaign] = field(default_factory=list)  # member.left in each
    characters: list[Character] = field(default_factory=list)  # kept, with no owner
    last_gm_of: list[Campaign] = field(default_factory=list)  # refused: the table's only GM

    @property
    def campaign_ids(self) -> set[int]:
        return {c.pk for c in self.leaves} | {c.campaign_id for c in self.characters}

    def refusal(self) -> str | None:
        if not self.last_gm_of:
            return None
        return _(
            "{user} is the only game master of {campaigns}: make another member a game master first"
        ).format(
            user=self.user.get_username(),
            campaigns=", ".join(f"«{campaign.name}»" for campaign in self.last_gm_of),
        )


def account_ties(*, user: AbstractBaseUser) -> Ties:
    memberships = (
        Membership.objects.filter(user_id=user.pk)
        .select_related("campaign")
        .annotate(gms=Count("campaign__memberships", filter=Q(campaign__memberships__role=Role.GM)))
        .order_by("campaign_id")
    )
    ties = Ties(user=user)
    for membership in memberships:
        ties.leaves.append(membership.campaign)
        if membership.role == Role.GM and membership.gms == 1:
            ties.last_gm_of.append(membership.campaign)
    ties.characters = list(
        Character.objects.filter(owner_id=user.pk).order_by("campaign_id", "created_seq")
    )
    return ties


def delete_user(*, user: AbstractBaseUser, by: AbstractBaseUser) -> None:
    delete_users(users=[user], by=by)


@transaction.atomic
def delete_users(*, users: Iterable[AbstractBaseUser], by: AbstractBaseUser) -> None:
    """Delete the accounts, writing first what it does to each campaign they are tied to; all or
    nothing: a refusal (`Conflict`, naming every account refused) changes nothing."""
    user_ids = sorted({user.pk for user in users})
    locked = _lock_ties(user_ids)
    # The accounts' rows, locked: a join racing with the deletion waits, then fails on its own.
    accounts = list(get_user_model().objects.select_for_update().filter(pk__in=user_ids))
    ties = [account_ties(user=account) for account in accounts]
    for grown in {cid for tie in ties for cid in tie.campaign_ids} - locked:
        lock_stream(grown)  # joined (and committed) since `_lock_ties` read: read again below
    ties = [account_ties(user=account) for account in accounts]
    refusals = [refusal for tie in ties if (refusal := tie.refusal())]
    if refusals:
        raise Conflict("user", "; ".join(refusals))
    for tie in ties:
        for campaign_id in sorted(tie.campaign_ids):
            remove_account(campaign=Campaign(pk=campaign_id), user_id=tie.user.pk, by=by)
        tie.user.delete()


def _lock_ties(user_ids: Sequence[int]) -> set[int]:
    """Take the stream lock of every campaign the accounts are tied to, in campaign order (as
    any other writer taking several would), before reading what the deletion decides on."""
    campaign_ids = set(
        Membership.objects.filter(user_id__in=user_ids).values_list("campaign_id", flat=True)
    ) | set(Character.objects.filter(owner_id__in=user_ids).values_list("campaign_id", flat=True))
    for campaign_id in sorted(campaign_ids):
        lock_stream(campaign_id)
    return campaign_ids
