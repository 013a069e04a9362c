"""Reading a check request: the fields each kind of check accepts, and the values they name."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from campaign.errors import Conflict, InvalidInput, NotFound
from campaign.models import (
    Campaign,
    Character,
    Membership,
    Session,
)
from rolls.models import Check, CheckCall, RuleUse
from rolls.reads.visibility import require_may_see

COMMON_KEYS = {"character", "traits", "pool", "modifiers", "visibility", "label", "task", "faces"}
# Keys of the request that describe one roll (also allowed inside `against` and `actions`).
ROLL_KEYS = {"character", "traits", "pool", "modifiers", "label"}
KIND_KEYS = {
    "d6pool": {"against", "mode"},
    "storyteller": {"against", "actions"},
    "age": {"against"},
    "cofd": {"helpers"},
    "nice_damnit": set(),
}
MAX_ACTIONS = 6
# Flags only a GM sets (directly, or in a call for a check that a player answers).
GM_FLAGS = {
    "not_escalating": "only the GM marks a check as not escalating",
    "life_or_death": "only the GM marks an action as life-or-death",
}


def refuse_unknown_fields(
    data: Mapping[str, Any], allowed: set[str], system: str, prefix: str = ""
) -> None:
    """A request names only fields its check has; the first unknown one (sorted) is the 400."""
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InvalidInput(f"{prefix}{unknown[0]}", f"not a field of a {system} check")


def text_field(data: Mapping[str, Any], key: str, max_length: int) -> str:
    value = data.get(key) or ""
    if not isinstance(value, str) or len(value) > max_length:
        raise InvalidInput(key, f"must be text of at most {max_length} characters")
    return value.strip()


def find_character(campaign: Campaign, value: Any, field: str = "character") -> Character | None:
    if value in (None, ""):
        return None
    try:
        character_id = uuid.UUID(str(value))
    except ValueError:
        raise InvalidInput(field, "is not a character id") from None
    character = Character.objects.filter(campaign=campaign, pk=character_id).first()
    if character is None:
        raise NotFound(field, "no such character in this campaign")
    return character


def helper_checks(
    campaign: Campaign, session: Session, data: Mapping[str, Any], membership: Membership
) -> list[Check]:
    seqs = data.get("helpers") or []
    if not isinstance(seqs, list) or not all(isinstance(s, int) for s in seqs) or len(seqs) > 8:
        raise InvalidInput("helpers", "expected a list of at most 8 check numbers (seq)")
    helpers = list(Check.objects.filter(campaign=campaign, seq__in=seqs).order_by("seq"))
    if len(helpers) != len(set(seqs)):
        raise NotFound("helpers", "a helper roll is not a check of this campaign")
    for helper in helpers:  # a hidden helper's successes would show in this roll's pool
        require_may_see(helper, membership, field="helpers")
    for helper in helpers:
        if helper.session_id != session.pk or helper.kind != "single":
            raise InvalidInput("helpers", f"check #{helper.seq} is not a roll of this session")
    if RuleUse.objects.filter(campaign=campaign, rule="helper", check_seq__in=seqs).exists():
        raise Conflict("helpers", "a helper roll has already been added to another roll")
    return helpers


def answering_call(campaign: Campaign, data: dict[str, Any]) -> CheckCall | None:
    call_id = data.pop("call", None)
    if not call_id:
        return None
    try:
        call = CheckCall.objects.filter(campaign=campaign, pk=uuid.UUID(str(call_id))).first()
    except ValueError:
        call = None
    if call is None or call.closed:
        raise NotFound("call", "no open call for a check with this id")
    character_id = str(data.get("character") or "")
    if character_id in call.answered:
        raise Conflict("call", "this character has already answered the call")
    return call
