"""Checks as events: roll, apply the stateful rules, append; reveal, reset a task, preview odds.

Every function here takes the campaign's stream lock first and reads the rule state (free botch
used? dramatic failure taken this chapter? attempt number? Fortune balance?) from the projections
under that lock, so concurrent requests are decided one after another against the same log.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from campaign import idempotency
from campaign.access import (
    require_controls_character,
    require_gm,
    require_may_act,
    require_player_or_gm,
)
from campaign.errors import Conflict, InvalidInput, NotAllowed, NotFound, call_rules
from campaign.limits import MAX_REQUEST_BYTES, check_stored_size, plain_json
from campaign.models import Campaign, Character, Membership, Role, Session
from eventlog.event_types import (
    CHARACTER_WILLPOWER_RESTORED,
    CHECK_REVEALED,
    CHECK_ROLLED,
    TASK_RESET,
)
from eventlog.models import Visibility
from eventlog.projections import inserted
from eventlog.stream import append_event, lock_stream
from rolls import systems
from rolls.checks import eligibility
from rolls.checks.assembly import SYSTEM_KEYS, RollContext
from rolls.checks.followups import locked_check
from rolls.checks.requests import (
    ANSWER_KEYS,
    COMMON_KEYS,
    GM_FLAGS,
    WILLPOWER_SYSTEMS,
    answering_call,
    assemble_from_sheet,
    client_seed_field,
    find_character,
    helper_checks,
    refuse_unknown_fields,
    require_helpers_shown,
    require_open_to,
    roll_request_keys,
    task_field,
    text_field,
    with_resistance,
)
from rolls.checks.rolling import (
    FreeBotches,
    Roller,
    lock_table,
    multiple_actions,
    opposed_rolls,
    read_roll_context,
    read_table,
    require_willpower,
    roll_entry,
    spend_willpower,
)
from rolls.models import Check, CheckCall, TaskAttempts
from rolls.reads.known import failed_attempts, last_counted_failure
from rolls.reads.visibility import may_see, outsider
from rolls.rules import failed_attempt, option, task_key
from rolls.systems import cofd
from rolls.systems.marks import roll_terms

# Parts of a request that belong to one roll only: its dice, the call it answered, its helpers.
NOT_REPEATED = ("faces", "call", "helpers", "client_seed")  # a repeat brings its own entropy


def _request_fields(
    data: dict[str, Any], system: str, is_gm: bool, call: CheckCall | None
) -> tuple[str, str, str]:
    """The request's own fields, checked (they depend on nothing the lock guards): unknown
    fields, the GM's flags, visibility, label and task."""
    refuse_unknown_fields(data, roll_request_keys(system), system)
    for gm_flag, message in GM_FLAGS.items():
        if data.get(gm_flag) and not is_gm and not (call and call.request.get(gm_flag)):
            raise NotAllowed(gm_flag, str(message))
    visibility = data.get("visibility") or Visibility.PUBLIC
    if visibility not in Visibility.values:
        raise InvalidInput(
            "visibility", _("must be one of {values}").format(values=", ".join(Visibility.values))
        )
    return visibility, text_field(data, "label", 200), task_field(data)


def check_roll(
    *,
    campaign: Campaign,
    actor: AbstractBaseUser,
    request: Mapping[str, Any],
    membership: Membership | None = None,
) -> Check:
    with idempotency.service_transaction():
        return _check_roll(campaign=campaign, actor=actor, request=request, membership=membership)


def _check_roll(
    *,
    campaign: Campaign,
    actor: AbstractBaseUser,
    request: Mapping[str, Any],
    membership: Membership | None,
) -> Check:
    """Roll a check: assemble the pool(s), roll, apply the stateful rules, append one event.

    ``membership``: the actor's, when the caller has just read it (a view); else it is read.
    Everything that can refuse the request is decided before the event is appended, and the
    projector applies what the event says without deciding again: with server dice a refused
    append would draw the same faces at the same seq, so a refusal after rolling could stick.
    What the request says by itself is checked before the lock; under it, one round trip takes
    the lock and reads the table (open periods, dice seed, the character) and one appends.
    """
    if membership is None:
        membership = require_player_or_gm(campaign, actor)
    else:
        require_may_act(membership)
    is_gm = membership.role == Role.GM
    if not isinstance(request, Mapping):
        raise InvalidInput("non_field_errors", _("expected a JSON object"))
    check_stored_size(dict(request), "request", MAX_REQUEST_BYTES)  # it is kept in the event
    data = dict(request)
    client_seed = client_seed_field(data.get("client_seed"))  # the roller's own, never the call's
    task = ""  # an answer's is the call's, read under the lock
    if not data.get("call"):  # an answer's fields are the call's, read under the lock
        visibility, label, task = _request_fields(data, campaign.system, is_gm, None)
    campaign, table = lock_table(campaign, data.get("character"), task, data.get("call"))
    system, options = campaign.system, campaign.options
    call = answering_call(campaign, data, table.call if table is not None else None)
    if call is not None:
        # The GM's call decides what is rolled; the player answers with the character, the
        # faces of physical dice and their own Willpower, nothing else (#12, item 7).
        extra = sorted(set(data) - ANSWER_KEYS)
        if extra:
            raise InvalidInput(extra[0], _("the GM's call sets this; answer with the faces only"))
        data = {**call.request, **data}
        visibility, label, task = _request_fields(data, system, is_gm, call)

    if table is None or table.asked != data.get("character"):  # options changed, or a call's
        table = read_table(campaign, data.get("character"), task)
    session = table.session
    if session is None:
        raise Conflict("session", _("no session is open: the GM starts one before anyone rolls"))
    character = table.character
    if data.get("character") not in (None, "") and character is None:
        raise NotFound("character", _("no such character in this campaign"))
    if character is not None:
        require_controls_character(membership, character)
    elif not is_gm:
        raise InvalidInput("character", _("roll for one of your characters"))
    if call is not None:
        require_open_to(call, character)
    # The GM's call decides a resistance and its Willpower; else whoever controls the side.
    resisted = with_resistance(campaign, membership, data, character, called=call is not None)
    resistance = resisted.get("resistance")
    resister = None
    if resistance and resistance["willpower"]:
        resister = Character.objects.get(pk=resistance["character"])
    if data.get("willpower") is True:
        # Before any die is drawn: with server dice a refusal after rolling would meet the
        # same faces at the same seq on the next try.
        require_willpower(character, 1)
    if resister is not None:
        require_willpower(resister, 1, field="resistance.willpower")
    seq = campaign.head_seq + 1
    manual = bool(option(options, system, "manual_dice"))
    roller = Roller(campaign, table, seq, data.get("faces"), manual, client_seed)

    helpers = (
        helper_checks(campaign, session, data, membership, character) if "helpers" in data else []
    )
    free_botches = FreeBotches(campaign, session, table=table)
    state = read_roll_context(
        campaign=campaign,
        session=session,
        character=character,
        task=task,
        is_gm=is_gm,
        life_or_death_called=bool(call and call.request.get("life_or_death")),
        helpers=helpers,
        circumstances_by="call" if call else "gm" if is_gm else "player",
        free_botches=free_botches,
        table=table,
    )

    def build(spec: Mapping[str, Any], who: Character | None, rule_state: RollContext, prefix=""):
        return assemble_from_sheet(campaign, who, spec, rule_state, prefix=prefix)

    rolls: list[dict[str, Any]] = []
    comparison: dict[str, Any] | None = None
    if "actions" in data:
        kind = "multiple"
        rolls = multiple_actions(data, character, build, roller, state, free_botches)
    elif "against" in data:
        if not is_gm:
            raise NotAllowed("against", _("the GM calls for opposed and resisted rolls"))
        kind, rolls, comparison = opposed_rolls(
            campaign, data, character, build, roller, state, free_botches
        )
    else:
        kind = "single"
        assembled = build(resisted, character, state)
        faces, result = roller.roll(system, assembled.check, 1)
        rolls = [roll_entry(character, data, assembled, faces, result)]
        if resister is not None:  # the resisting character's spend, taken off by the projector
            rolls[0]["resistance_willpower_spent"] = {"character_id": str(resister.pk), "points": 1}
    spend_willpower(system, rolls, character)

    for entry in rolls:
        if system == "cofd":
            entry["beats_awarded"] = cofd.beats(
                entry["result"], option(options, "cofd", "beat_on_dramatic_failure")
            )
    audience = sorted({actor.pk, *(r["owner_id"] for r in rolls if r["owner_id"])})
    if helpers:  # the helpers' successes show in this roll's pool
        require_helpers_shown(campaign, helpers, visibility, audience)
    free_botch_scope = option(options, system, "free_botch") if system == "storyteller" else None
    first = rolls[0]
    payload = {
        "kind": kind,
        "system": system,
        "options": options,
        "dice": "manual" if roller.manual else "server",
        "label": label,
        "task": task,
        "call_id": str(call.pk) if call else None,
        "helpers": [h.seq for h in helpers],
        "audience": audience,
        "rolls": rolls,
        "comparison": comparison,
        "free_botch_scope": free_botch_scope,
        # Decided here, under the lock, so the projector only applies it.
        "failed_attempt": failed_attempt(
            system,
            task,
            first["character_id"],
            first["result"],
            bool(first["rules"].get("not_escalating")),
        ),
        # What was asked (a call's request merged in), so the roller can roll it again.
        "request": plain_json({k: v for k, v in data.items() if k not in NOT_REPEATED}),
        **roller.record,
    }
    event = append_event(
        campaign=campaign,
        type=CHECK_ROLLED,
        payload=payload,
        actor_id=actor.pk,
        visibility=visibility,
        session_id=session.pk,
        scene_id=table.scene_id,
        chapter_id=table.chapter_id,
        character_id=character.pk if character else None,
        read=() if call is None else (call,),  # the projector marks it answered
    )
    # The row the projector just wrote, not read back; presenting it reads the table as it is.
    check = inserted(event, Check)
    check.campaign, check.event = campaign, event
    check.used_as_helper = False  # just rolled: no roll has named it yet
    unchanged = not any(r.get("willpower_spent") or r.get("beats_awarded") for r in rolls)
    check.now = eligibility.Now(
        campaign,
        _characters={character.pk: character} if character and unchanged else {},
        _dramatic_failures=dict(table.dramatic_failures),
    )
    return check


@transaction.atomic
def reveal_check(*, campaign: Campaign, actor: AbstractBaseUser, seq: int) -> Check:
    """GM: show a private or blind roll to everyone, and the hidden helper rolls whose
    successes are in its pool (RULES 3.7: showing it shows their results)."""
    membership = require_gm(campaign, actor)
    campaign, check, now = locked_check(campaign, seq)
    eligibility.require(eligibility.REVEAL, check, membership, now)
    named = Check.objects.filter(campaign=campaign, seq__in=check.data.get("helpers") or [])
    table = outsider(campaign.pk)
    hidden = [helper for helper in named.order_by("seq") if not may_see(helper, table)]
    for shown in (check, *hidden):
        append_event(
            campaign=campaign,
            type=CHECK_REVEALED,
            payload={"check_seq": shown.seq},
            actor_id=actor.pk,
            character_id=shown.character_id,
            session_id=shown.session_id,
            read=(shown,),
        )
    return check  # as the projector changed it


@transaction.atomic
def reset_task(
    *, campaign: Campaign, actor: AbstractBaseUser, character_id: Any, task: Any
) -> None:
    """GM: circumstances changed, so the next attempt at the task is a first attempt again."""
    require_gm(campaign, actor)
    campaign = lock_stream(campaign.pk)
    character = find_character(campaign, character_id)
    if character is None:
        raise InvalidInput("character", _("name the character"))
    if not isinstance(task, str) or not task.strip():
        raise InvalidInput("task", _("name the task"))
    task = task_field({"task": task})
    if not TaskAttempts.objects.filter(
        campaign=campaign, character_id=character.pk, task=task_key(task)
    ).exists():
        raise NotFound("task", _("this character has no failed attempts at this task"))
    # The reset names the task and tells that a counted attempt at it failed: public only when
    # the table knows of one; else as visible as the last counted failure (its roll's audience
    # sees it, everyone once that roll is revealed), a stub to the rest.
    key = task_key(task)
    told = failed_attempts(
        campaign=campaign, character_id=character.pk, task=key, viewer=outsider(campaign.pk)
    )
    last = last_counted_failure(campaign, character.pk, key)
    payload: dict[str, Any] = {"character_id": str(character.pk), "task": key}
    if not told and last is not None:
        payload["check_seq"] = last.seq
    append_event(
        campaign=campaign,
        type=TASK_RESET,
        payload=payload,
        actor_id=actor.pk,
        visibility=Visibility.PUBLIC if told or last is None else Visibility.PRIVATE,
        character_id=character.pk,
    )


def preview_odds(
    *, campaign: Campaign, actor: AbstractBaseUser, request: Mapping[str, Any]
) -> dict:
    """The exact odds of a check as it would be rolled now (attempt number included); no roll."""
    membership = require_player_or_gm(campaign, actor)
    if not isinstance(request, Mapping):
        raise InvalidInput("non_field_errors", _("expected a JSON object"))
    data = {k: v for k, v in request.items() if k not in ("faces", "visibility", "label", "call")}
    character = find_character(campaign, data.get("character"))
    if character is not None:
        require_controls_character(membership, character)
    elif membership.role != Role.GM:
        raise InvalidInput("character", _("choose one of your characters"))
    session = Session.open_in(campaign)
    task = task_field(data)
    state = RollContext(life_or_death_allowed=membership.role == Role.GM)
    if session is not None:  # the state as this member may know it, not what hidden rolls did
        state = read_roll_context(
            campaign=campaign,
            session=session,
            character=character,
            task=task,
            is_gm=membership.role == Role.GM,
            life_or_death_called=False,
            helpers=[],
            viewer=membership,
        )
    spec = {k: v for k, v in data.items() if k not in ("against", "actions", "helpers", "mode")}
    refuse_unknown_fields(spec, COMMON_KEYS | set(SYSTEM_KEYS[campaign.system]), campaign.system)
    spec = with_resistance(campaign, membership, spec, character)
    assembled = assemble_from_sheet(campaign, character, spec, state)
    chances = call_rules(systems.odds, campaign.system, assembled.check)
    return {
        "system": campaign.system,
        "check": assembled.check,
        "breakdown": assembled.breakdown,
        "rules": assembled.rules,
        "terms": roll_terms(campaign.system, assembled.check),  # what it rolls, decided here
        "odds": chances,
    }


MAX_WILLPOWER_RESTORE = 20


@transaction.atomic
def restore_willpower(
    *, campaign: Campaign, actor: AbstractBaseUser, character_id: Any, amount: Any
) -> Character:
    """GM: give a character back Willpower (rest, a virtue or vice, a story beat): one event."""
    require_gm(campaign, actor)
    campaign = lock_stream(campaign.pk)
    if campaign.system not in WILLPOWER_SYSTEMS:
        raise InvalidInput("amount", _("{system} has no Willpower").format(system=campaign.system))
    character = find_character(campaign, character_id)
    if character is None:
        raise InvalidInput("character", _("name the character"))
    if (
        not isinstance(amount, int)
        or isinstance(amount, bool)
        or not 1 <= amount <= MAX_WILLPOWER_RESTORE
    ):
        raise InvalidInput(
            "amount", _("restore 1 to {n} Willpower").format(n=MAX_WILLPOWER_RESTORE)
        )
    append_event(
        campaign=campaign,
        type=CHARACTER_WILLPOWER_RESTORED,
        payload={"character_id": str(character.pk), "amount": amount},
        actor_id=actor.pk,
        character_id=character.pk,
    )
    return Character.objects.get(pk=character.pk)
