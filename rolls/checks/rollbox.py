"""The roll box on the server: a typed line becomes the check request it names (the «vs» side
found among the campaign's characters), previewed with its exact odds; and «roll again».

The grammar is ``rolls.systems.rollbox`` (pure); what the line rolls goes through the same
services as the roll form (``check_roll``, ``preview_odds``), so the box and the form cannot
disagree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from campaign.access import require_player_or_gm
from campaign.errors import Conflict, InvalidInput, NotAllowed, NotFound, call_rules
from campaign.models import Campaign, Character
from rolls.checks.requests import find_character, find_characters
from rolls.checks.services import NOT_REPEATED, check_roll, preview_odds
from rolls.models import Check
from rolls.systems import rollbox
from rolls.systems.sheets import fold
from rolls.words import trait_name


def _target_by_name(campaign: Campaign, parsed: rollbox.Parsed) -> Character | None:
    """The character an ``@Name`` in the line names: its whole name, else the one it begins."""
    versus = parsed.versus
    if versus is None or versus.character is None:
        return None
    wanted = fold(versus.character)
    characters = list(Character.objects.filter(campaign=campaign))
    found = [c for c in characters if fold(c.name) == wanted] or [
        c for c in characters if fold(c.name).startswith(wanted)
    ]
    if len(found) == 1:
        return found[0]
    token = next(t for t in parsed.tokens if t.kind == "character")
    word = parsed.text[token.start : token.end]
    if not found:
        message = gettext_noop("no character here is called {name}")
        params = {"name": versus.character}
    else:
        message = gettext_noop("{name} names more than one character: {names}")
        params = {"name": versus.character, "names": ", ".join(c.name for c in found)}
    raise InvalidInput.from_rule_error(
        rollbox.RollBoxError(
            message,
            start=token.start,
            end=token.end,
            word=word,
            suggestions=[c.name for c in found or characters][:5],
            params=params,
        )
    )


def request_from_line(
    *,
    campaign: Campaign,
    text: Any,
    character: Any = None,
    target: Any = None,
    group: Sequence[Character] = (),
) -> tuple[dict[str, Any], rollbox.Parsed]:
    """The check request a line names, for ``character`` (an id; whose sheet it reads), or for
    each of a ``group`` (a GM's group check: the words of every sheet are the line's; the
    request names no character)."""
    if not isinstance(text, str):
        raise InvalidInput("text", _("expected a line of text"))
    who = find_character(campaign, character)
    sheets = [c.traits for c in ([who] if who else group)]
    parsed = call_rules(rollbox.parse, campaign.system, text, sheets=sheets)
    other = find_character(campaign, target, "target") or _target_by_name(campaign, parsed)
    found = (
        None
        if other is None
        else rollbox.Target(id=str(other.pk), name=other.name, sheet=other.traits)
    )
    request = call_rules(rollbox.with_versus, campaign.system, parsed, found)
    if who is not None:
        request["character"] = str(who.pk)
    return request, parsed


def _tokens(system: str, parsed: rollbox.Parsed) -> list[dict[str, Any]]:
    shown = []
    for token in parsed.tokens:
        row = {"start": token.start, "end": token.end, "kind": token.kind, "value": token.value}
        if token.kind == "trait":
            row["label"] = trait_name(system, token.value)
        elif token.label:
            row["label"] = token.label
        shown.append(row)
    return shown


def preview_line(
    *,
    campaign: Campaign,
    actor: AbstractBaseUser,
    text: Any,
    character: Any = None,
    target: Any = None,
    characters: Any = None,
) -> dict[str, Any]:
    """What a line would roll, with its exact odds; nothing is rolled or logged.

    ``characters`` (ids, as a call for a check names them) reads the line once for a group:
    the request (without a character, as ``POST …/calls/`` takes it) and, in ``previews``,
    the odds for each of them (a trait a sheet lacks counts 0); the top-level odds are the
    first one's."""
    require_player_or_gm(campaign, actor)
    group: list[Character] = []
    if characters is not None:
        if character not in (None, ""):
            raise InvalidInput("characters", _("give character or characters, not both"))
        group = find_characters(campaign, characters)
    request, parsed = request_from_line(
        campaign=campaign, text=text, character=character, target=target, group=group
    )
    previews = []
    for who in group or [None]:
        asked = request if who is None else {**request, "character": str(who.pk)}
        try:
            preview = preview_odds(campaign=campaign, actor=actor, request=asked)
        except InvalidInput as error:  # the check the line names breaks a rule: show where
            raise _at_the_word(error, parsed, who) from error
        previews.append(
            preview if who is None else {"character": str(who.pk), "name": who.name, **preview}
        )
    shown = {"text": text, "request": request, "tokens": _tokens(campaign.system, parsed)}
    if group:
        first = {k: v for k, v in previews[0].items() if k not in ("character", "name")}
        return {**shown, **first, "previews": previews}
    return {**shown, **previews[0]}


def _at_the_word(
    error: InvalidInput, parsed: rollbox.Parsed, who: Character | None = None
) -> InvalidInput:
    """A refusal of the check the line names, pointed at the word it concerns when one does
    (a trait the system lacks, a specialty the sheet lacks); the field stays in ``field``, and
    in a group check the character it concerns in ``character``."""
    kinds = {"traits": ("trait",), "specialty": ("specialty",), "focus": ("focus",)}
    candidates = [t for t in parsed.tokens if t.kind in kinds.get(error.field, ())]
    token = next((t for t in candidates if str(t.value) in error.message), None)
    if token is None and len(candidates) == 1:
        token = candidates[0]
    at = None
    if token is not None:
        at = {"start": token.start, "end": token.end, "word": parsed.text[token.start : token.end]}
    details: dict[str, Any] = {"at": at, "field": error.field}
    message = error.message
    if who is not None:
        details["character"] = str(who.pk)
        message = f"{who.name}: {message}"
    return InvalidInput("text", message, details=details)


def roll_again(
    *, campaign: Campaign, actor: AbstractBaseUser, seq: int, changes: Mapping[str, Any]
) -> Check:
    """Roll one's own earlier check again, from the request it recorded (a call it answered is
    not answered twice: the repeat is a plain roll of the call's request)."""
    require_player_or_gm(campaign, actor)
    check = Check.objects.filter(campaign=campaign, seq=seq).first()
    if check is None:
        raise NotFound("check", _("no such check in this campaign"))
    if check.actor_id != actor.pk:
        raise NotAllowed("check", _("only the roller rolls a roll again"))
    request = (check.data or {}).get("request")
    if request is None:
        raise Conflict(
            "check",
            _(
                "this roll was made before rolls were recorded with their request; "
                "roll it from the form"
            ),
        )
    unknown = sorted(set(changes) - {"visibility", "faces"})
    if unknown:
        raise InvalidInput(unknown[0], _("unknown field"))
    repeated = _resistance_as_recorded_before(
        campaign.system, {k: v for k, v in request.items() if k not in NOT_REPEATED}
    )
    return check_roll(campaign=campaign, actor=actor, request={**repeated, **changes})


def _resistance_as_recorded_before(system: str, request: dict[str, Any]) -> dict[str, Any]:
    """CofD rolls recorded before resistances had their own field kept one as a modifier of the
    group ``resistance`` (now the server's): roll it again as the rating it was."""
    modifiers = request.get("modifiers")
    if system != "cofd" or not isinstance(modifiers, list) or "resistance" in request:
        return request
    old = [m for m in modifiers if isinstance(m, Mapping) and m.get("group") == "resistance"]
    if not old:
        return request
    kept = [m for m in modifiers if m not in old]
    value = -sum(m.get("value", 0) for m in old if isinstance(m.get("value"), int))
    return {**request, "modifiers": kept, "resistance": {"value": max(0, value)}}
