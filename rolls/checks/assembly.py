"""From a check request and a character sheet to the engine's check: the pool, assembled.

Pure Python (no Django): the server calls it inside the append transaction with the rule state it
read from the projections (attempt number, free botch still unused, teamwork bonus), and the
result — the engine check plus a human-readable breakdown — is what the event records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rolls.rules import option
from rolls.systems import MAX_DICE, cofd, d6pool, storyteller
from rolls.systems.errors import RuleError
from rolls.systems.errors import gettext_noop as _
from rolls.systems.traits import NICE_DAMNIT_RANKS

MAX_MODIFIER = 50

# Request keys each system understands, with the engine key they feed (None: used in assembly).
SYSTEM_KEYS: dict[str, tuple[str, ...]] = {
    "d6pool": ("life_or_death",),
    "storyteller": ("difficulty", "automatic", "stressful", "not_escalating", "willpower"),
    "cofd": (
        "again",
        "rote",
        "exceptional_at",
        "extra_successes",
        "specialty",
        "under_pressure",
        "extended",
        "willpower",
        "resistance",
    ),
    "age": ("target", "focus", "active", "focus_required"),
    "nice_damnit": (),
}


# Modifier groups the server computes from the log and the rules; a request naming one would
# stand in for (or cancel) the server's decision, so requests may not use them (#12, item 8).
SERVER_GROUPS = frozenset(
    {
        "teamwork",
        "retry",
        "willpower",
        "specialty",
        "adrenaline",
        "actions",
        "opposed",
        "cap",
        "resistance",
        "resistance_willpower",
    }
)
# The labels of the lines the server writes whose label is not their kind (the API's words; a
# reader is shown the kind's name: rolls.words.line_label, which reads them from here).
SERVER_LABELS: dict[str, str] = {
    "dice": "pool",
    "willpower": "Willpower",
    "actions": "multiple actions",
    "opposed": "attacker's successes",
}
# Circumstances: who sets them is recorded with the roll (``circumstances``), and the GM sets
# the campaign's default as a rule option of the same name.
CIRCUMSTANCES: dict[str, tuple[str, ...]] = {
    "storyteller": ("stressful",),
    "cofd": ("under_pressure", "extended"),
}


def group_name(raw: str) -> str:
    """One name per group however it is typed: "Equipment " and "equipment" are one group."""
    return " ".join(raw.split()).casefold()


@dataclass(frozen=True)
class RollContext:
    """What the server read from the log before rolling."""

    attempt: int = 1  # 1 + failed attempts at this task so far
    free_botch_available: bool = False
    teamwork_bonus: int = 0
    helper_count: int = 0
    life_or_death_allowed: bool = False  # set when a GM marks the action (or answers their call)
    # who set the circumstances present in the request: "player", "gm" or "call"
    circumstances_by: str = "player"


@dataclass
class Assembled:
    check: dict[str, Any]
    breakdown: list[dict[str, Any]] = field(default_factory=list)
    rules: dict[str, Any] = field(default_factory=dict)
    circumstances: dict[str, dict[str, Any]] = field(default_factory=dict)


def _int(request: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = request.get(key, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise RuleError(
            _("expected an integer from {low} to {high}"),
            field=key,
            params={"low": low, "high": high},
        )
    return value


def _bool(request: Mapping[str, Any], key: str, default: bool = False) -> bool:
    value = request.get(key, default)
    if not isinstance(value, bool):
        raise RuleError(_("expected true or false"), field=key)
    return value


def modifiers_of(request: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``modifiers``: ints, or ``{"group", "value", "label"}`` objects (CofD caps per group)."""
    raw = request.get("modifiers") or []
    if not isinstance(raw, list) or len(raw) > 20:
        raise RuleError(
            _("expected a list of at most {n} modifiers"), field="modifiers", params={"n": 20}
        )
    clean = []
    for index, item in enumerate(raw):
        where = f"modifiers.{index}"
        if isinstance(item, int) and not isinstance(item, bool):
            item = {"value": item}
        if not isinstance(item, Mapping):
            raise RuleError(_("a modifier is an integer or {group, value, label}"), field=where)
        value = item.get("value")
        if not isinstance(value, int) or isinstance(value, bool) or abs(value) > MAX_MODIFIER:
            raise RuleError(
                _("value must be an integer within ±{n}"), field=where, params={"n": MAX_MODIFIER}
            )
        group = item.get("group") or "circumstance"
        label = item.get("label") or group
        if not isinstance(group, str) or not isinstance(label, str) or len(label) > 60:
            raise RuleError(_("group and label are short text"), field=where)
        group = group_name(group)
        if group in SERVER_GROUPS:
            raise RuleError(
                _(
                    "the group {group} is computed by the server from the rules; "
                    "name your modifier's group otherwise"
                ),
                field=where,
                params={"group": repr(group)},
            )
        clean.append({"group": group, "value": value, "label": label})
    return clean


def _trait_names(request: Mapping[str, Any]) -> list[str]:
    names = request.get("traits") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or len(names) > 4:
        raise RuleError(
            _("expected a list of at most {n} trait names"), field="traits", params={"n": 4}
        )
    if len(set(names)) != len(names):
        raise RuleError(_("name each trait once"), field="traits")
    return names


def _lookup(sheet: Mapping[str, Any], groups: Sequence[str], name: str) -> tuple[str, int]:
    for group in groups:
        values = sheet.get(group) or {}
        if name in values:
            return group, values[name]
    raise RuleError(
        _("the character has no trait {name}"), field="traits", params={"name": repr(name)}
    )


def _base(request: Mapping[str, Any]) -> int | None:
    value = request.get("pool")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not -MAX_DICE <= value <= MAX_DICE:
        raise RuleError(
            _("expected an integer from {low} to {high}"),
            field="pool",
            params={"low": -MAX_DICE, "high": MAX_DICE},
        )
    return value


def _dice_from_traits(
    sheet: Mapping[str, Any] | None, request: Mapping[str, Any], groups: Sequence[str]
) -> tuple[int, list[dict[str, Any]]]:
    """Σ named traits (+ an explicit ``pool`` of dice), with the breakdown lines."""
    names = _trait_names(request)
    base = _base(request)
    if names and sheet is None:
        raise RuleError(_("traits need a character"), field="traits")
    if not names and base is None:
        raise RuleError(_("name the traits to roll, or give a pool"), field="traits")
    total, lines = 0, []
    for name in names:
        group, value = _lookup(sheet or {}, groups, name)
        total += value
        lines.append({"label": name, "value": value, "kind": group})
    if base is not None:
        total += base
        lines.append({"label": SERVER_LABELS["dice"], "value": base, "kind": "dice"})
    return total, lines


def _check_pool(pool: int) -> int:
    if pool > MAX_DICE:
        raise RuleError(
            _("{pool} dice is above the cap of {cap}"),
            field="pool",
            params={"pool": pool, "cap": MAX_DICE},
        )
    return pool


def _mod_lines(mods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"label": m["label"], "value": m["value"], "kind": m["group"]} for m in mods]


def _capped_lines(mods: list[dict[str, Any]], cap: int | None) -> list[dict[str, Any]]:
    """CofD breakdown: a group the cap cut is one line with the rule's value and the cap
    ("retry -8, capped at -5"); other groups keep one line per modifier. The lines add up."""
    groups = {g["group"]: g for g in cofd.capped_groups(mods, cap)}
    lines, shown = [], set()
    for m in mods:
        group = groups[m["group"]]
        if not group["capped"]:
            lines.append({"label": m["label"], "value": m["value"], "kind": m["group"]})
        elif m["group"] not in shown:
            shown.add(m["group"])
            lines.append(
                {
                    "label": m["group"],
                    "value": group["applied"],
                    "kind": m["group"],
                    "raw": group["raw"],
                    "cap": group["cap"],
                }
            )
    return lines


def _circumstances(
    system: str, request: Mapping[str, Any], options: Mapping[str, Any], state: RollContext
) -> dict[str, dict[str, Any]]:
    """Each circumstance's value and who set it: the request's (player, GM or call) or the
    campaign default (the GM's rule option of the same name)."""
    out = {}
    for name in CIRCUMSTANCES.get(system, ()):
        if name in request and request[name] is not None:
            out[name] = {"value": _bool(request, name), "by": state.circumstances_by}
        else:
            out[name] = {"value": bool(option(options, system, name)), "by": "default"}
    return out


def assemble(
    system: str,
    sheet: Mapping[str, Any] | None,
    request: Mapping[str, Any],
    options: Mapping[str, Any],
    state: RollContext = RollContext(),
) -> Assembled:
    builder = _BUILDERS.get(system)
    if builder is None:
        raise RuleError(
            _("unknown game system {system}"), field="system", params={"system": repr(system)}
        )
    return builder(sheet, request, options, state)


def _d6pool(sheet, request, options, state) -> Assembled:
    dice, lines = _dice_from_traits(sheet, request, ("attributes", "abilities"))
    mods = modifiers_of(request)
    lines += _mod_lines(mods)
    pool = dice + sum(m["value"] for m in mods)
    rules: dict[str, Any] = {}
    if _bool(request, "life_or_death"):
        if not state.life_or_death_allowed:
            raise RuleError(
                _("only the GM marks an action as life-or-death"), field="life_or_death"
            )
        extra = d6pool.adrenaline_dice(True, True, option(options, "d6pool", "adrenaline_dice"))
        pool += extra
        lines.append({"label": "adrenaline", "value": extra, "kind": "adrenaline"})
        rules["adrenaline_dice"] = extra
    check = {"pool": _check_pool(pool), "desperate": option(options, "d6pool", "desperate")}
    return Assembled(check, lines, rules)


def _storyteller(sheet, request, options, state) -> Assembled:
    dice, lines = _dice_from_traits(sheet, request, ("attributes", "abilities"))
    mods = modifiers_of(request)
    lines += _mod_lines(mods)
    pool = dice + sum(m["value"] for m in mods)
    base_difficulty = _int(request, "difficulty", 6, 2, 10)
    exempt = _bool(request, "not_escalating")
    mode = option(options, "storyteller", "retry_escalation")
    why = storyteller.retry_explanation(base_difficulty, state.attempt, mode, exempt=exempt)
    difficulty = why["difficulty"]
    rules: dict[str, Any] = {"attempt": state.attempt, "base_difficulty": base_difficulty}
    if state.attempt > 1 and not exempt:
        # The retry raises the difficulty; it is never a term of the dice pool (#12, item 12).
        rules["retry"] = why
        rules["difficulty_raise"] = why["raise"]
    if exempt:
        rules["not_escalating"] = True
    circumstances = _circumstances("storyteller", request, options, state)
    automatic = _bool(request, "automatic")
    if automatic and pool < why["uncapped"]:
        # README decision: the clamp to 10 keeps a 10 succeeding; the rating an automatic
        # success must reach is the escalated one (attempt 4, seed, base 6: 12).
        raise RuleError(
            _(
                "an automatic success needs pool ≥ difficulty ({pool} < {difficulty}, "
                "the escalated difficulty); roll instead"
            ),
            field="automatic",
            params={"pool": pool, "difficulty": why["uncapped"]},
        )
    willpower = _bool(request, "willpower")
    if willpower:
        rules["willpower"] = 1
    check = {
        "pool": _check_pool(pool),
        "difficulty": difficulty,
        "automatic": automatic,
        "stressful": circumstances["stressful"]["value"],
        "free_botch": state.free_botch_available,
        "willpower": willpower,
    }
    return Assembled(check, lines, rules, circumstances)


def _cofd(sheet, request, options, state) -> Assembled:
    dice, lines = _dice_from_traits(sheet, request, ("attributes", "skills"))
    specialty = request.get("specialty")
    if specialty:
        named = [
            n
            for n in _trait_names(request)
            if specialty in ((sheet or {}).get("specialties") or {}).get(n, [])
        ]
        if not named:
            raise RuleError(
                _("no rolled skill has the specialty {name}"),
                field="specialty",
                params={"name": repr(specialty)},
            )
        dice += 1
        lines.append({"label": specialty, "value": 1, "kind": "specialty"})
    willpower = _bool(request, "willpower")
    if willpower:  # RULES 2.11 / CofD 2e: +3 dice, outside the modifier groups and their cap
        bonus = cofd.willpower_bonus()
        dice += bonus
        lines.append({"label": SERVER_LABELS["willpower"], "value": bonus, "kind": "willpower"})
    resistance = request.get("resistance")  # read by the service (requests.read_resistance)
    if resistance:
        # README "Resistance": the target's trait is a part of the pool, not a modifier group:
        # the ±cap of RULES 3.2 does not cut it. Willpower raises the trait by 2.
        dice -= resistance["value"]
        # The label (English keys, for the API) and, for a trait, what the reader's words are
        # made of: the traits and whose they are (rolls.words.line_label).
        in_words = {k: resistance[k] for k in ("traits", "resister_name") if k in resistance}
        lines.append({"label": resistance["label"], "value": -resistance["value"],
                      "kind": "resistance", **in_words})  # fmt: skip
        if resistance["willpower"]:
            raised = cofd.willpower_bonus(resistance=True)
            dice -= raised
            lines.append(
                {"label": "resistance_willpower", "value": -raised, "kind": "resistance_willpower"}
            )
    mods = modifiers_of(request)
    circumstances = _circumstances("cofd", request, options, state)
    penalty = cofd.retry_penalty(
        state.attempt,
        under_pressure=circumstances["under_pressure"]["value"],
        extended=circumstances["extended"]["value"],
        enabled=option(options, "cofd", "retry_penalty"),
    )
    if penalty:
        mods.append({"group": "retry", "value": penalty, "label": "retry"})
    if state.helper_count:
        mods.append({"group": "teamwork", "value": state.teamwork_bonus, "label": "teamwork"})
    cap = option(options, "cofd", "modifier_cap")
    lines += _capped_lines(mods, cap)
    pool = cofd.capped_pool(dice, mods, cap=cap)
    again = request.get("again", 10)
    if again not in (10, 9, 8, None):
        raise RuleError(_("expected 10, 9, 8 or null (no explosions)"), field="again")
    check = {
        "pool": _check_pool(pool),
        "again": again,
        "rote": _bool(request, "rote"),
        "exceptional_at": _int(request, "exceptional_at", 5, 1, 10),
        "extra_successes": _int(request, "extra_successes", 0, 0, 10),
        "chance_die_explodes": option(options, "cofd", "chance_die_explodes"),
    }
    rules: dict[str, Any] = {"attempt": state.attempt}
    if penalty:
        rules["retry_penalty"] = penalty  # the rule's value; the breakdown line shows the cap
    if state.helper_count:
        rules["teamwork_bonus"] = state.teamwork_bonus
    if willpower:
        rules["willpower"] = 1
    if resistance:
        rules["resistance"] = resistance["value"]
        if resistance["willpower"]:
            rules["resistance_willpower"] = {"character": resistance["character"], "points": 1}
    return Assembled(check, lines, rules, circumstances)


def _age(sheet, request, options, state) -> Assembled:
    names = _trait_names(request)
    base = _base(request)
    lines: list[dict[str, Any]] = []
    ability = 0
    if len(names) > 1:
        raise RuleError(_("an AGE test uses one ability"), field="traits")
    if names:
        if sheet is None:
            raise RuleError(_("traits need a character"), field="traits")
        _group, ability = _lookup(sheet, ("abilities",), names[0])
        lines.append({"label": names[0], "value": ability, "kind": "abilities"})
    if base is not None:
        ability += base
        lines.append({"label": "ability", "value": base, "kind": "ability"})
    focus_name = request.get("focus")
    has_focus = False
    if focus_name:
        if not isinstance(focus_name, str):
            raise RuleError(_("name the focus"), field="focus")
        focuses = (sheet or {}).get("focuses") or {}
        owned = [f for ability_name in names for f in focuses.get(ability_name, [])]
        if sheet is not None and focus_name not in owned:
            raise RuleError(
                _("the character has no focus {name} here"),
                field="focus",
                params={"name": repr(focus_name)},
            )
        has_focus = True
        lines.append({"label": focus_name, "value": 2, "kind": "focus"})
    mods = modifiers_of(request)
    lines += _mod_lines(mods)
    target = request.get("target")
    if target is not None:
        target = _int(request, "target", 0, 1, 40)
    check = {
        "ability": ability,
        "focus": has_focus,
        "modifier": sum(m["value"] for m in mods),
        "target": target,
        "active": _bool(request, "active", True),
        "focus_required": _bool(request, "focus_required"),
        "fortune_dice": option(options, "age", "fortune_dice"),
    }
    return Assembled(check, lines, {})


def _nice_damnit(sheet, request, options, state) -> Assembled:
    names = _trait_names(request)
    base = _base(request)
    lines: list[dict[str, Any]] = []
    bonus = 0
    if names and sheet is None:
        raise RuleError(_("traits need a character"), field="traits")
    for name in names:
        group, value = _lookup(sheet or {}, ("areas", "skills"), name)
        value = NICE_DAMNIT_RANKS[value] if group == "skills" else value
        bonus += value
        lines.append({"label": name, "value": value, "kind": group})
    if base is not None:
        bonus += base
        lines.append({"label": "bonus", "value": base, "kind": "bonus"})
    mods = modifiers_of(request)
    lines += _mod_lines(mods)
    bonus += sum(m["value"] for m in mods)
    check = {
        "bonus": bonus,
        "extra_nice": 0,
        "extra_nice_enabled": option(options, "nice_damnit", "extra_nice"),
    }
    return Assembled(check, lines, {})


_BUILDERS = {
    "d6pool": _d6pool,
    "storyteller": _storyteller,
    "cofd": _cofd,
    "age": _age,
    "nice_damnit": _nice_damnit,
}

# Systems where a failed attempt at a named task makes the next one harder.
