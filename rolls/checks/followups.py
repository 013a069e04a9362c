"""Follow-ups after a roll (intentional dramatic failure, Fortune, extra Nice!): each takes the
stream lock, checks the roll it amends, and appends one event."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext, gettext_lazy

from campaign.access import require_controls_character, require_player_or_gm
from campaign.errors import Conflict, InvalidInput, NotFound, call_rules
from campaign.models import (
    Campaign,
    Chapter,
    Character,
    Membership,
    Scene,
)
from eventlog.event_types import (
    CHECK_DRAMATIC_FAILURE_TAKEN,
    CHECK_EXTRA_NICE_TAKEN,
    CHECK_FORTUNE_SPENT,
)
from eventlog.stream import append_event, lock_stream
from rolls import systems
from rolls.models import Check, RuleUse
from rolls.rules import option
from rolls.systems import age, cofd, nice_damnit

PERIOD_OVER = {
    "chapter": gettext_lazy("this roll's chapter is over (or none was open when it was made)"),
    "scene": gettext_lazy("this roll's scene is over (or none was open when it was made)"),
}
ALREADY_TAKEN = {
    "chapter": gettext_lazy(
        "{name} has already taken an intentional dramatic failure this chapter"
    ),
    "scene": gettext_lazy("{name} has already taken an intentional dramatic failure this scene"),
}


def _followup_target(
    campaign: Campaign, actor: AbstractBaseUser, seq: int, system: str
) -> tuple[Campaign, Membership, Check, Character]:
    membership = require_player_or_gm(campaign, actor)
    campaign = lock_stream(campaign.pk)
    check = Check.objects.filter(campaign=campaign, seq=seq).first()
    if check is None:
        raise NotFound("check", gettext("no such check in this campaign"))
    if campaign.system != system or check.kind != "single":
        raise InvalidInput("check", gettext("this follow-up does not apply to this roll"))
    character = Character.objects.filter(pk=check.character_id).first()
    if character is None:
        raise InvalidInput("check", gettext("this roll was not made for a character"))
    require_controls_character(membership, character)
    return campaign, membership, check, character


def _append_followup(
    campaign: Campaign, actor: AbstractBaseUser, check: Check, type_: str, payload: dict
) -> Check:
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
    )
    return Check.objects.get(pk=check.pk)


@transaction.atomic
def take_dramatic_failure(*, campaign: Campaign, actor: AbstractBaseUser, seq: int) -> Check:
    """CofD: turn a failed roll into a dramatic failure and earn a Beat (per A.2's allowance)."""
    campaign, _, check, character = _followup_target(campaign, actor, seq, "cofd")
    mode = option(campaign.options, "cofd", "intentional_dramatic_failure")
    if mode == "off":
        raise Conflict("check", gettext("intentional dramatic failures are off in this campaign"))
    result = check.data["rolls"][0]["result"]
    if result.get("intentional"):
        # The rule refuses because the roll was already converted: a conflict, like the
        # losers of a race on different rolls (#12, item 6), not bad input.
        raise Conflict(
            "check", gettext("this roll has already been turned into a dramatic failure")
        )
    new_result = call_rules(cofd.intentional_dramatic_failure, result, prefix="check.")
    period_id = None
    if mode in ("per_chapter", "per_scene"):
        period_model, name = (Chapter, "chapter") if mode == "per_chapter" else (Scene, "scene")
        period_id = check.chapter_id if mode == "per_chapter" else check.scene_id
        current = period_model.open_in(campaign)
        if period_id is None or current is None or current.pk != period_id:
            raise Conflict(name, str(PERIOD_OVER[name]))
        used = RuleUse.objects.filter(
            campaign=campaign,
            rule="intentional_dramatic_failure",
            period_id=period_id,
            character_id=character.pk,
        )
        if used.exists():
            raise Conflict("check", str(ALREADY_TAKEN[name]).format(name=character.name))
    return _append_followup(
        campaign,
        actor,
        check,
        CHECK_DRAMATIC_FAILURE_TAKEN,
        {
            "period_id": str(period_id) if period_id else None,
            "mode": mode,
            "beats": 1,
            "result": new_result,
        },
    )


@transaction.atomic
def spend_fortune(
    *, campaign: Campaign, actor: AbstractBaseUser, seq: int, die: Any, value: Any
) -> Check:
    """AGE: after the roll, pay Fortune to set one die (the Drama Die costs double)."""
    campaign, _, check, character = _followup_target(campaign, actor, seq, "age")
    roll = check.data["rolls"][0]
    if not option(campaign.options, "age", "fortune_dice"):
        raise Conflict("check", gettext("Fortune dice are off in this campaign"))
    if not roll["check"]["fortune_dice"]:  # what the roll was made under
        raise Conflict(
            "check", gettext("this roll was made without Fortune dice (they were off then)")
        )
    if roll["result"]["outcome"] == "auto_failure" or not roll["faces"]:
        raise Conflict(
            "check", gettext("this roll rolled no dice (an automatic failure): no die to set")
        )
    if check.data.get("fortune_spent"):
        raise Conflict("check", gettext("Fortune has already changed a die of this roll"))
    change = {"die": die, "value": value}
    cost = call_rules(age.fortune_cost, change, prefix="")
    balance = int(character.resources.get("fortune", 0))
    if cost > balance:
        raise Conflict(
            "fortune",
            gettext("this change costs {cost} Fortune; {name} has {balance}").format(
                cost=cost, name=character.name, balance=balance
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
    campaign, _, check, _ = _followup_target(campaign, actor, seq, "nice_damnit")
    if not option(campaign.options, "nice_damnit", "extra_nice"):
        raise Conflict("check", gettext("extra Nice! chips are off in this campaign"))
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 2:
        raise InvalidInput("count", gettext("take 1 or 2 extra Nice!"))
    roll = check.data["rolls"][0]
    if roll["result"]["extra_nice"]:
        raise Conflict("check", gettext("extra Nice! have already been taken on this roll"))
    allowed = nice_damnit.extra_nice_allowed(roll["result"]["total"])
    if allowed == 0:
        raise Conflict(
            "count", gettext("no extra Nice! are possible on this roll (bad band or caps)")
        )
    new_check = {**roll["check"], "extra_nice": count}
    result = call_rules(systems.resolve, "nice_damnit", new_check, roll["faces"])
    return _append_followup(
        campaign, actor, check, CHECK_EXTRA_NICE_TAKEN, {"check": new_check, "result": result}
    )
