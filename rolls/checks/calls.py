"""The GM's calls for a check: open one (validated against every character it names), close it."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from campaign.access import require_gm
from campaign.errors import DomainError, InvalidInput, NotFound
from campaign.limits import MAX_REQUEST_BYTES, check_stored_size
from campaign.models import (
    Campaign,
    Membership,
)
from eventlog.event_types import CHECK_CALL_CLOSED, CHECK_CALLED
from eventlog.stream import append_event, lock_stream
from rolls.checks.assembly import RollContext
from rolls.checks.requests import (
    assemble_from_sheet,
    call_request_keys,
    find_characters,
    parse_uuid,
    refuse_unknown_fields,
    task_field,
    text_field,
    with_resistance,
)
from rolls.models import CheckCall


@transaction.atomic
def call_for_check(
    *,
    campaign: Campaign,
    actor: AbstractBaseUser,
    character_ids: Any,
    request: Mapping[str, Any],
) -> CheckCall:
    """GM: ask the named characters' players to roll; their pages show a roll button."""
    require_gm(campaign, actor)
    campaign = lock_stream(campaign.pk)
    characters = find_characters(campaign, character_ids)
    if not isinstance(request, Mapping):
        raise InvalidInput("request", _("expected an object"))
    check_stored_size(dict(request), "request", MAX_REQUEST_BYTES)
    spec = {k: v for k, v in request.items() if k not in ("character", "faces", "call")}
    # What an answer carries (character, faces, Willpower, client seed) is never the call's.
    allowed = call_request_keys(campaign.system)
    refuse_unknown_fields(spec, allowed, campaign.system, prefix="request.")
    try:  # what every answer checks of the call's own text: refused here, not in each answer
        text_field(spec, "label", 200)
        task_field(spec)
    except DomainError as error:
        raise type(error)(f"request.{error.field}", error.message) from error
    gm = Membership.objects.get(campaign=campaign, user=actor)
    for character in characters:  # the call must be rollable by everyone it names
        try:
            resisted = with_resistance(campaign, gm, spec, character)
        except DomainError as error:  # named where it is in the call
            raise type(error)(f"request.{error.field}", error.message) from error
        assemble_from_sheet(
            campaign,
            character,
            resisted,
            RollContext(life_or_death_allowed=True),
            prefix="request.",
        )
    call_id = uuid.uuid4()
    append_event(
        campaign=campaign,
        type=CHECK_CALLED,
        payload={
            "call_id": str(call_id),
            "character_ids": [str(c.pk) for c in characters],
            "character_names": [c.name for c in characters],
            "request": spec,
        },
        actor_id=actor.pk,
    )
    return CheckCall.objects.get(pk=call_id)


@transaction.atomic
def close_call(*, campaign: Campaign, actor: AbstractBaseUser, call_id: Any) -> None:
    require_gm(campaign, actor)
    campaign = lock_stream(campaign.pk)
    call_pk = parse_uuid(call_id, "call")
    call = CheckCall.objects.filter(campaign=campaign, pk=call_pk, closed=False).first()
    if call is None:
        raise NotFound("call", _("no open call for a check with this id"))
    append_event(
        campaign=campaign,
        type=CHECK_CALL_CLOSED,
        payload={"call_id": str(call.pk)},
        actor_id=actor.pk,
    )
