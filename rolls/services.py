"""Checks as events: roll, apply the stateful rules, append; and the follow-ups after a roll.

Every function here takes the campaign's stream lock first and reads the rule state (free botch
used? dramatic failure taken this chapter? attempt number? Fortune balance?) from the projections
under that lock, so concurrent requests are decided one after another against the same log.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from campaign.access import require_controls_character, require_gm, require_player_or_gm
from campaign.errors import Conflict, InvalidInput, NotAllowed, NotFound, by_the_rules
from campaign.eventlog import append_event, lock_stream
from campaign.models import (
    Campaign,
    Chapter,
    Character,
    Membership,
    Role,
    Scene,
    Session,
    SessionSecret,
    Visibility,
)
from rolls import systems
from rolls.assembly import RETRY_SYSTEMS, SYSTEM_KEYS, RuleState, assemble
from rolls.models import Check, CheckCall, RuleUse, TaskAttempts
from rolls.systems import HmacDice, age, cofd, d6pool, nice_damnit, storyteller

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


def _text(data: Mapping[str, Any], key: str, max_length: int) -> str:
    value = data.get(key) or ""
    if not isinstance(value, str) or len(value) > max_length:
        raise InvalidInput(key, f"must be text of at most {max_length} characters")
    return value.strip()


def _character(campaign: Campaign, value: Any, field: str = "character") -> Character | None:
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


class _Roller:
    """Rolls every roll of one event: server dice from the session seed, or the player's faces."""

    def __init__(self, campaign: Campaign, session: Session, seq: int, faces: Any, manual: bool):
        self.manual = manual
        self.index = 0
        if manual:
            if faces is None:
                raise InvalidInput("faces", "this campaign uses physical dice: enter the faces")
            self.faces = faces
        else:
            if faces is not None:
                raise InvalidInput(
                    "faces",
                    "this campaign rolls on the server; faces are accepted only "
                    "when the rule option manual_dice is on",
                )
            secret = SessionSecret.objects.get(session_id=session.pk)
            self.dice = HmacDice(bytes(secret.seed), str(campaign.pk), seq)

    def roll(self, system: str, check: dict[str, Any], count: int) -> tuple[list[int], dict]:
        """The next roll's faces and result; ``count`` is how many rolls the event has."""
        if not self.manual:
            return by_the_rules(systems.roll, system, check, self.dice)
        faces = self.faces
        if count > 1:
            if not isinstance(faces, list) or len(faces) != count:
                raise InvalidInput("faces", f"expected {count} lists of faces, one per roll")
            faces = faces[self.index]
        self.index += 1
        if not isinstance(faces, list) or not all(
            isinstance(f, int) and not isinstance(f, bool) for f in faces
        ):
            raise InvalidInput("faces", "expected a list of integers")
        result = by_the_rules(systems.resolve, system, check, faces, prefix="")
        return list(faces), result


def _rule_state(
    *,
    campaign: Campaign,
    session: Session,
    character: Character | None,
    task: str,
    is_gm: bool,
    life_or_death_called: bool,
    helpers: list[Check],
) -> RuleState:
    system, options = campaign.system, campaign.options
    attempt = 1
    if task and character and system in RETRY_SYSTEMS:
        row = TaskAttempts.objects.filter(campaign=campaign, character_id=character.pk, task=task)
        attempt += row.values_list("failures", flat=True).first() or 0
    free_botch = False
    mode = options.get("free_botch", "off") if system == "storyteller" else "off"
    if mode != "off" and character is not None:
        used = RuleUse.objects.filter(campaign=campaign, rule="free_botch", period_id=session.pk)
        if mode == "per_character":
            used = used.filter(character_id=character.pk)
        free_botch = not used.exists()
    bonus = cofd.teamwork_bonus([h.data["rolls"][0]["result"] for h in helpers]) if helpers else 0
    return RuleState(
        attempt=attempt,
        free_botch_available=free_botch,
        teamwork_bonus=bonus,
        helper_count=len(helpers),
        life_or_death_allowed=is_gm or life_or_death_called,
    )


def _helpers(campaign: Campaign, session: Session, data: Mapping[str, Any]) -> list[Check]:
    seqs = data.get("helpers") or []
    if not isinstance(seqs, list) or not all(isinstance(s, int) for s in seqs) or len(seqs) > 8:
        raise InvalidInput("helpers", "expected a list of at most 8 check numbers (seq)")
    helpers = list(Check.objects.filter(campaign=campaign, seq__in=seqs).order_by("seq"))
    if len(helpers) != len(set(seqs)):
        raise NotFound("helpers", "a helper roll is not a check of this campaign")
    for helper in helpers:
        if helper.session_id != session.pk or helper.kind != "single":
            raise InvalidInput("helpers", f"check #{helper.seq} is not a roll of this session")
    if RuleUse.objects.filter(campaign=campaign, rule="helper", check_seq__in=seqs).exists():
        raise Conflict("helpers", "a helper roll has already been added to another roll")
    return helpers


def _roll_entry(
    character: Character | None,
    spec: Mapping[str, Any],
    assembled,
    faces: list[int],
    result: dict[str, Any],
) -> dict[str, Any]:
    return {
        "character_id": str(character.pk) if character else None,
        "character_name": character.name if character else "",
        "owner_id": character.owner_id if character else None,
        "traits": list(spec.get("traits") or []),
        "label": (spec.get("label") or "")[:200] if isinstance(spec.get("label"), str) else "",
        "breakdown": assembled.breakdown,
        "rules": assembled.rules,
        "check": assembled.check,
        "faces": faces,
        "result": result,
    }


@transaction.atomic
def check_roll(*, campaign: Campaign, actor: AbstractBaseUser, request: Mapping[str, Any]) -> Check:
    """Roll a check: assemble the pool(s), roll, apply the stateful rules, append one event."""
    membership = require_player_or_gm(campaign, actor)
    is_gm = membership.role == Role.GM
    if not isinstance(request, Mapping):
        raise InvalidInput("non_field_errors", "expected a JSON object")
    campaign = lock_stream(campaign.pk)
    system, options = campaign.system, campaign.options
    data = dict(request)
    call = _answering_call(campaign, data)
    if call is not None:
        # The GM's call decides what is rolled; the player only chooses to roll (and the faces).
        data = {**data, **call.request}
    allowed = COMMON_KEYS | {"call"} | set(SYSTEM_KEYS[system]) | KIND_KEYS[system]
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InvalidInput(unknown[0], f"not a field of a {system} check")

    session = Session.open_in(campaign)
    if session is None:
        raise Conflict("session", "no session is open: the GM starts one before anyone rolls")
    for gm_flag, message in GM_FLAGS.items():
        if data.get(gm_flag) and not is_gm and not (call and call.request.get(gm_flag)):
            raise NotAllowed(gm_flag, message)
    character = _character(campaign, data.get("character"))
    if character is not None:
        require_controls_character(membership, character)
    elif not is_gm:
        raise InvalidInput("character", "roll for one of your characters")
    if call is not None and (character is None or str(character.pk) not in call.character_ids):
        raise NotAllowed("call", "this call for a check is not addressed to this character")
    visibility = data.get("visibility") or Visibility.PUBLIC
    if visibility not in Visibility.values:
        raise InvalidInput("visibility", f"must be one of {', '.join(Visibility.values)}")
    label = _text(data, "label", 200)
    task = _text(data, "task", 120)
    seq = campaign.head_seq + 1
    roller = _Roller(campaign, session, seq, data.get("faces"), bool(options.get("manual_dice")))

    helpers = _helpers(campaign, session, data) if "helpers" in data else []
    state = _rule_state(
        campaign=campaign,
        session=session,
        character=character,
        task=task,
        is_gm=is_gm,
        life_or_death_called=bool(call and call.request.get("life_or_death")),
        helpers=helpers,
    )

    def build(spec: Mapping[str, Any], who: Character | None, rule_state: RuleState, prefix=""):
        return by_the_rules(
            assemble, system, who.traits if who else None, spec, options, rule_state, prefix=prefix
        )

    rolls: list[dict[str, Any]] = []
    comparison: dict[str, Any] | None = None
    if "actions" in data:
        kind = "multiple"
        rolls = _multiple_actions(data, character, build, roller, state, system)
    elif "against" in data:
        if not is_gm:
            raise NotAllowed("against", "the GM calls for opposed and resisted rolls")
        kind, rolls, comparison = _opposed(campaign, data, character, build, roller, state)
    else:
        kind = "single"
        assembled = build(data, character, state)
        faces, result = roller.roll(system, assembled.check, 1)
        rolls = [_roll_entry(character, data, assembled, faces, result)]

    for entry in rolls:
        if system == "cofd":
            entry["beats_awarded"] = cofd.beats(
                entry["result"], options.get("beat_on_dramatic_failure", False)
            )
    audience = sorted({actor.pk, *(r["owner_id"] for r in rolls if r["owner_id"])})
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
        "free_botch_scope": options.get("free_botch") if system == "storyteller" else None,
    }
    scene, chapter = Scene.open_in(campaign), Chapter.open_in(campaign)
    append_event(
        campaign=campaign,
        type="check.rolled",
        payload=payload,
        actor_id=actor.pk,
        visibility=visibility,
        session_id=session.pk,
        scene_id=scene.pk if scene else None,
        chapter_id=chapter.pk if chapter else None,
        character_id=character.pk if character else None,
    )
    return Check.objects.get(campaign=campaign, seq=seq)


def _answering_call(campaign: Campaign, data: dict[str, Any]) -> CheckCall | None:
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


def _multiple_actions(data, character, build, roller, state, system) -> list[dict[str, Any]]:
    if system != "storyteller":
        raise InvalidInput("actions", "multiple actions are a Storyteller rule")
    actions = data["actions"]
    if not isinstance(actions, list) or not 2 <= len(actions) <= MAX_ACTIONS:
        raise InvalidInput("actions", f"declare 2 to {MAX_ACTIONS} actions")
    shared = {k: v for k, v in data.items() if k in ("difficulty", "stressful")}
    specs, bases = [], []
    for index, action in enumerate(actions):
        if not isinstance(action, Mapping) or set(action) - (ROLL_KEYS | {"difficulty"}):
            raise InvalidInput(
                f"actions.{index}", "an action has traits, pool, modifiers, difficulty and label"
            )
        spec = {**shared, **action}
        specs.append(spec)
        bases.append(build(spec, character, state, prefix=f"actions.{index}.").check["pool"])
    pools = storyteller.multiple_action_pools(bases)
    rolls = []
    for index, (spec, pool) in enumerate(zip(specs, pools, strict=True)):
        assembled = build(spec, character, state, prefix=f"actions.{index}.")
        split = pool - assembled.check["pool"]
        assembled.check["pool"] = pool
        assembled.breakdown.append({"label": "multiple actions", "value": split, "kind": "actions"})
        faces, result = roller.roll("storyteller", assembled.check, len(specs))
        rolls.append(_roll_entry(character, spec, assembled, faces, result))
    return rolls


def _opposed(campaign, data, character, build, roller, state):
    system = campaign.system
    against = data["against"]
    if not isinstance(against, Mapping) or set(against) - (ROLL_KEYS | set(SYSTEM_KEYS[system])):
        raise InvalidInput("against", "the other side has character, traits, pool, modifiers")
    other = _character(campaign, against.get("character"), "against.character")
    first_spec = {k: v for k, v in data.items() if k not in ("against", "mode")}
    first = build(first_spec, character, state)
    faces_a, result_a = roller.roll(system, first.check, 2)
    other_state = RuleState(life_or_death_allowed=True)
    second = build(against, other, other_state, prefix="against.")
    if system == "d6pool":
        mode = data.get("mode") or "opposed"
        if mode not in ("opposed", "contest"):
            raise InvalidInput("mode", "must be opposed or contest")
        if mode == "opposed":
            reduced = d6pool.defender_pool(result_a, second.check["pool"])
            kind = "opposed"
            if reduced is None:  # a failed attack needs no defence roll
                comparison = d6pool.opposed(result_a, None)
                return (
                    kind,
                    [_roll_entry(character, first_spec, first, faces_a, result_a)],
                    comparison,
                )
            penalty = reduced - second.check["pool"]
            second.check["pool"] = reduced
            second.breakdown.append(
                {"label": "attacker's successes", "value": penalty, "kind": "opposed"}
            )
    faces_b, result_b = roller.roll(system, second.check, 2)
    if system == "d6pool":
        comparison = (
            d6pool.opposed(result_a, result_b)
            if mode == "opposed"
            else d6pool.contest([result_a, result_b])
        )
        kind = mode
    elif system == "storyteller":
        kind, comparison = "resisted", storyteller.resisted(result_a, result_b)
    else:
        kind, comparison = "opposed", age.opposed(result_a, result_b)
    return (
        kind,
        [
            _roll_entry(character, first_spec, first, faces_a, result_a),
            _roll_entry(other, against, second, faces_b, result_b),
        ],
        comparison,
    )


# --- follow-ups after a roll ---------------------------------------------------------------


def _followup_target(
    campaign: Campaign, actor: AbstractBaseUser, seq: int, system: str
) -> tuple[Campaign, Membership, Check, Character]:
    membership = require_player_or_gm(campaign, actor)
    campaign = lock_stream(campaign.pk)
    check = Check.objects.filter(campaign=campaign, seq=seq).first()
    if check is None:
        raise NotFound("check", "no such check in this campaign")
    if campaign.system != system or check.kind != "single":
        raise InvalidInput("check", "this follow-up does not apply to this roll")
    character = Character.objects.filter(pk=check.character_id).first()
    if character is None:
        raise InvalidInput("check", "this roll was not made for a character")
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
    mode = campaign.options.get("intentional_dramatic_failure", "per_chapter")
    if mode == "off":
        raise Conflict("check", "intentional dramatic failures are off in this campaign")
    result = check.data["rolls"][0]["result"]
    new_result = by_the_rules(cofd.intentional_dramatic_failure, result, prefix="check.")
    period_id = None
    if mode in ("per_chapter", "per_scene"):
        period_model, name = (Chapter, "chapter") if mode == "per_chapter" else (Scene, "scene")
        period_id = check.chapter_id if mode == "per_chapter" else check.scene_id
        current = period_model.open_in(campaign)
        if period_id is None or current is None or current.pk != period_id:
            raise Conflict(name, f"this roll's {name} is over (or none was open when it was made)")
        used = RuleUse.objects.filter(
            campaign=campaign,
            rule="intentional_dramatic_failure",
            period_id=period_id,
            character_id=character.pk,
        )
        if used.exists():
            raise Conflict(
                "check",
                f"{character.name} has already taken an intentional dramatic failure this {name}",
            )
    return _append_followup(
        campaign,
        actor,
        check,
        "check.dramatic_failure_taken",
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
    if not campaign.options.get("fortune_dice", True):
        raise Conflict("check", "Fortune dice are off in this campaign")
    if check.data.get("fortune_spent"):
        raise Conflict("check", "Fortune has already changed a die of this roll")
    roll = check.data["rolls"][0]
    change = {"die": die, "value": value}
    cost = by_the_rules(age.fortune_cost, change, prefix="")
    balance = int(character.resources.get("fortune", 0))
    if cost > balance:
        raise Conflict(
            "fortune", f"this change costs {cost} Fortune; {character.name} has {balance}"
        )
    new_check = {**roll["check"], "fortune_change": change}
    result = by_the_rules(systems.resolve, "age", new_check, roll["faces"])
    return _append_followup(
        campaign,
        actor,
        check,
        "check.fortune_spent",
        {"change": change, "cost": cost, "check": new_check, "result": result},
    )


@transaction.atomic
def take_extra_nice(*, campaign: Campaign, actor: AbstractBaseUser, seq: int, count: Any) -> Check:
    """Nice!/Damnit!: take up to 2 extra Nice!, each with a Damnit!, within the caps of 9."""
    campaign, _, check, _ = _followup_target(campaign, actor, seq, "nice_damnit")
    if not campaign.options.get("extra_nice", True):
        raise Conflict("check", "extra Nice! chips are off in this campaign")
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 2:
        raise InvalidInput("count", "take 1 or 2 extra Nice!")
    roll = check.data["rolls"][0]
    if roll["result"]["extra_nice"]:
        raise Conflict("check", "extra Nice! have already been taken on this roll")
    allowed = nice_damnit.extra_nice_allowed(roll["result"]["total"])
    if allowed == 0:
        raise Conflict("count", "no extra Nice! are possible on this roll (bad band or caps)")
    new_check = {**roll["check"], "extra_nice": count}
    result = by_the_rules(systems.resolve, "nice_damnit", new_check, roll["faces"])
    return _append_followup(
        campaign, actor, check, "check.extra_nice_taken", {"check": new_check, "result": result}
    )


@transaction.atomic
def reveal_check(*, campaign: Campaign, actor: AbstractBaseUser, seq: int) -> Check:
    """GM: show a private or blind roll to everyone."""
    require_gm(campaign, actor)
    campaign = lock_stream(campaign.pk)
    check = Check.objects.filter(campaign=campaign, seq=seq).first()
    if check is None:
        raise NotFound("check", "no such check in this campaign")
    if check.visibility == Visibility.PUBLIC or check.revealed:
        raise Conflict("check", "this roll is already visible to everyone")
    append_event(
        campaign=campaign,
        type="check.revealed",
        payload={"check_seq": seq},
        actor_id=actor.pk,
        character_id=check.character_id,
        session_id=check.session_id,
    )
    return Check.objects.get(pk=check.pk)


@transaction.atomic
def reset_task(
    *, campaign: Campaign, actor: AbstractBaseUser, character_id: Any, task: Any
) -> None:
    """GM: circumstances changed, so the next attempt at the task is a first attempt again."""
    require_gm(campaign, actor)
    campaign = lock_stream(campaign.pk)
    character = _character(campaign, character_id)
    if character is None:
        raise InvalidInput("character", "name the character")
    if not isinstance(task, str) or not task.strip():
        raise InvalidInput("task", "name the task")
    if not TaskAttempts.objects.filter(
        campaign=campaign, character_id=character.pk, task=task.strip()
    ).exists():
        raise NotFound("task", "this character has no failed attempts at this task")
    append_event(
        campaign=campaign,
        type="task.reset",
        payload={"character_id": str(character.pk), "task": task.strip()},
        actor_id=actor.pk,
        character_id=character.pk,
    )


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
    if not isinstance(character_ids, list) or not 1 <= len(character_ids) <= 20:
        raise InvalidInput("characters", "name 1 to 20 characters")
    characters = [_character(campaign, value, "characters") for value in character_ids]
    if not isinstance(request, Mapping):
        raise InvalidInput("request", "expected an object")
    spec = {k: v for k, v in request.items() if k not in ("character", "faces", "call")}
    allowed = (COMMON_KEYS - {"character", "faces"}) | set(SYSTEM_KEYS[campaign.system])
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise InvalidInput(f"request.{unknown[0]}", f"not a field of a {campaign.system} check")
    for character in characters:  # the call must be rollable by everyone it names
        by_the_rules(
            assemble,
            campaign.system,
            character.traits,
            spec,
            campaign.options,
            RuleState(life_or_death_allowed=True),
            prefix="request.",
        )
    call_id = uuid.uuid4()
    append_event(
        campaign=campaign,
        type="check.called",
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
    call = CheckCall.objects.filter(campaign=campaign, pk=str(call_id), closed=False).first()
    if call is None:
        raise NotFound("call", "no open call for a check with this id")
    append_event(
        campaign=campaign,
        type="check.call_closed",
        payload={"call_id": str(call.pk)},
        actor_id=actor.pk,
    )


def preview_odds(
    *, campaign: Campaign, actor: AbstractBaseUser, request: Mapping[str, Any]
) -> dict:
    """The exact odds of a check as it would be rolled now (attempt number included); no roll."""
    membership = require_player_or_gm(campaign, actor)
    if not isinstance(request, Mapping):
        raise InvalidInput("non_field_errors", "expected a JSON object")
    data = {k: v for k, v in request.items() if k not in ("faces", "visibility", "label", "call")}
    character = _character(campaign, data.get("character"))
    if character is not None:
        require_controls_character(membership, character)
    elif membership.role != Role.GM:
        raise InvalidInput("character", "choose one of your characters")
    session = Session.open_in(campaign)
    task = _text(data, "task", 120)
    state = RuleState(life_or_death_allowed=membership.role == Role.GM)
    if session is not None:
        state = _rule_state(
            campaign=campaign,
            session=session,
            character=character,
            task=task,
            is_gm=membership.role == Role.GM,
            life_or_death_called=False,
            helpers=[],
        )
    spec = {k: v for k, v in data.items() if k not in ("against", "actions", "helpers", "mode")}
    unknown = sorted(set(spec) - (COMMON_KEYS | set(SYSTEM_KEYS[campaign.system])))
    if unknown:
        raise InvalidInput(unknown[0], f"not a field of a {campaign.system} check")
    assembled = by_the_rules(
        assemble,
        campaign.system,
        character.traits if character else None,
        spec,
        campaign.options,
        state,
    )
    chances = by_the_rules(systems.odds, campaign.system, assembled.check)
    return {
        "system": campaign.system,
        "check": assembled.check,
        "breakdown": assembled.breakdown,
        "rules": assembled.rules,
        "odds": chances,
    }
