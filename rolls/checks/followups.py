"""Follow-ups after a roll (intentional dramatic failure, Fortune, extra Nice!): each takes the
stream lock, asks the follow-up's rule (`rolls.checks.eligibility`, the same one that lists what
a page offers) on the true state, and appends one event."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext

from campaign.access import require_player_or_gm
from campaign.errors import Conflict, InvalidInput, NotFound, call_rules
from campaign.models import Campaign, Membership
from eventlog.event_types import (
    CHECK_DRAMATIC_FAILURE_TAKEN,
    CHECK_EXTRA_NICE_TAKEN,
    CHECK_FORTUNE_SPENT,
)
from eventlog.stream import append_event
from rolls import systems
from rolls.checks import eligibility
from rolls.checks.rolling import lock_followed_check
from rolls.models import Check
from rolls.reads.visibility import require_may_see
from rolls.systems import age, cofd


def _followup_target(
    campaign: Campaign, actor: AbstractBaseUser, seq: int
) -> tuple[Campaign, Membership, Check, eligibility.Now]:
    membership = require_player_or_gm(campaign, actor)
    campaign, check, now = locked_check(campaign, seq)
    return campaign, membership, check, now


def locked_check(campaign: Campaign, seq: int) -> tuple[Campaign, Check, eligibility.Now]:
    """Take the stream lock and read check ``seq`` with what its follow-ups' rules read (its
    character, the open periods, the dramatic failures taken in them), in one round trip."""
    campaign, check, table = lock_followed_check(campaign, seq)
    if check is None:
        raise NotFound("check", gettext("no such check in this campaign"))
    now = eligibility.Now(
        campaign,
        _characters={check.character_id: table.character} if check.character_id else {},
        _periods={
            "session": table.session.pk if table.session else None,
            "chapter": table.chapter_id,
            "scene": table.scene_id,
        },
        _dramatic_failures=dict(table.dramatic_failures),
    )
    return campaign, check, now


def _append_followup(
    campaign: Campaign, actor: AbstractBaseUser, check: Check, type_: str, payload: dict
) -> Check:
    """Append the follow-up; the check it returns is the one read under the lock, as the
    projector amended it (not read back)."""
    append_event(
        campaign=campaign,
        type=type_,
        payload={"check_seq": check.seq, **payload},
        actor_id=actor.pk,
        visibility=check.visibility,
        session_id=check.session_id,
        scene_id=check.scene_id,
        chapter_id=check.chapter_id,
        character_id=check.character_id,
        read=(check,),
    )
    return check


@transaction.atomic
def take_dramatic_failure(*, campaign: Campaign, actor: AbstractBaseUser, seq: int) -> Check:
    """CofD: turn a failed roll into a dramatic failure and earn a Beat (per A.2's allowance)."""
    campaign, membership, check, now = _followup_target(campaign, actor, seq)
    offer = eligibility.require(eligibility.DRAMATIC_FAILURE, check, membership, now)
    result = check.data["rolls"][0]["result"]
    new_result = call_rules(cofd.intentional_dramatic_failure, result, prefix="check.")
    return _append_followup(
        campaign,
        actor,
        check,
        CHECK_DRAMATIC_FAILURE_TAKEN,
        {
            "period_id": str(offer.period_id) if offer.period_id else None,
            "mode": offer.limit,
            "beats": 1,
            "result": new_result,
        },
    )


@transaction.atomic
def spend_fortune(
    *, campaign: Campaign, actor: AbstractBaseUser, seq: int, die: Any, value: Any
) -> Check:
    """AGE: after the roll, pay Fortune to set one die (the Drama Die costs double)."""
    campaign, membership, check, now = _followup_target(campaign, actor, seq)
    offer = eligibility.require(eligibility.FORTUNE, check, membership, now)
    roll = check.data["rolls"][0]
    change = {"die": die, "value": value}
    cost = call_rules(age.fortune_cost, change, prefix="")
    if cost > offer.balance["fortune"]:
        # No balance in the message: the true one may differ from what this member may know.
        name = roll["character_name"]
        raise Conflict(
            "fortune",
            gettext("this change costs {cost} Fortune, more than {name} has").format(
                cost=cost, name=name
            ),
        )
    new_check = {**roll["check"], "fortune_change": change}
    result = call_rules(systems.resolve, "age", new_check, roll["faces"])
    return _append_followup(
        campaign,
        actor,
        check,
        CHECK_FORTUNE_SPENT,
        {"change": change, "cost": cost, "check": new_check, "result": result},
    )


@transaction.atomic
def take_extra_nice(*, campaign: Campaign, actor: AbstractBaseUser, seq: int, count: Any) -> Check:
    """Nice!/Damnit!: take up to 2 extra Nice!, each with a Damnit!, within the caps of 9."""
    campaign, membership, check, now = _followup_target(campaign, actor, seq)
    require_may_see(check, membership)  # before the count: nothing about a hidden roll differs
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 2:
        raise InvalidInput("count", gettext("take 1 or 2 extra Nice!"))
    offer = eligibility.require(eligibility.EXTRA_NICE, check, membership, now)
    allowed = max(choice["body"]["count"] for choice in offer.choices)
    if count > allowed:  # the engine would take fewer than asked, and say so only after
        raise Conflict(
            "count",
            gettext("at most {n} extra Nice! on this roll (its band and the caps of 9)").format(
                n=allowed
            ),
        )
    roll = check.data["rolls"][0]
    new_check = {**roll["check"], "extra_nice": count}
    result = call_rules(systems.resolve, "nice_damnit", new_check, roll["faces"])
    return _append_followup(
        campaign, actor, check, CHECK_EXTRA_NICE_TAKEN, {"check": new_check, "result": result}
    )
