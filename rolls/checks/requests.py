"""Reading a check request: the fields each kind of check accepts, and the values they name."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from django.db.models import Exists, OuterRef
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from campaign.errors import Conflict, InvalidInput, NotAllowed, NotFound, call_rules
from campaign.models import (
    Campaign,
    Character,
    Membership,
    Role,
    Session,
)
from eventlog.models import Visibility
from rolls.checks.assembly import (
    CIRCUMSTANCES,
    MAX_DICE,
    MAX_MODIFIER,
    SYSTEM_KEYS,
    Assembled,
    RollContext,
    assemble,
)
from rolls.models import Check, CheckCall, RuleUse
from rolls.reads.visibility import Facts, may_see, outsider, require_may_see
from rolls.systems import MAX_FACES
from rolls.systems.errors import RuleError
from rolls.systems.traits import sheet_for_roll

COMMON_KEYS = {
    "character",
    "traits",
    "pool",
    "modifiers",
    "visibility",
    "label",
    "task",
    "faces",
    "client_seed",
}
MAX_CLIENT_SEED = 128  # hex digits: 64 bytes
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
# What a player's answer to a GM's call may carry: the call fixes everything else (#12, item 7).
# Willpower is the character's own resource, declared with the roll (README: rule decisions);
# the client seed is the roller's own entropy (docs/verification.md).
ANSWER_KEYS = {"character", "faces", "willpower", "client_seed"}
# Systems whose characters spend Willpower on a roll (RULES 2.11).
WILLPOWER_SYSTEMS = ("storyteller", "cofd")
# Flags only a GM sets (directly, or in a call for a check that a player answers).
GM_FLAGS = {
    "not_escalating": gettext_lazy("only the GM marks a check as not escalating"),
    "life_or_death": gettext_lazy("only the GM marks an action as life-or-death"),
}


# The JSON schema of each request key (the API's schema is built from these and the key tables
# above, so the fields it lists per system are the ones refuse_unknown_fields lets through).
# Ranges are those assembly.py and rolling.py check.
_TEXT = {"type": "string", "pattern": "^[^\\u0000]*$"}
_BOOL = {"type": "boolean"}
_ID = {"type": "string", "format": "uuid"}


def _int_schema(low: int, high: int, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high, **extra}


def _roll_fields() -> dict[str, dict[str, Any]]:
    modifier = {
        "oneOf": [
            _int_schema(-MAX_MODIFIER, MAX_MODIFIER),
            {
                "type": "object",
                "properties": {
                    "value": _int_schema(-MAX_MODIFIER, MAX_MODIFIER),
                    "group": {
                        **_TEXT,
                        "maxLength": 60,
                        "description": "a group of your own (CofD caps each at ±modifier_cap);"
                        " teamwork, retry, willpower, specialty, adrenaline, actions, opposed,"
                        " resistance and cap are the server's",
                    },
                    "label": {**_TEXT, "maxLength": 60},
                },
                "required": ["value"],
                "additionalProperties": False,
            },
        ]
    }
    return {
        "character": {
            # find_character: null or "" is no character
            "oneOf": [_ID, {"type": "string", "enum": [""]}],
            "nullable": True,
            "description": "whose sheet (GM: none, null or empty, for an NPC)",
        },
        "traits": {
            "type": "array",
            "items": {**_TEXT, "minLength": 1, "maxLength": 100},
            "maxItems": 4,
            "uniqueItems": True,
            "description": "trait names of the character's sheet",
        },
        "pool": _int_schema(-MAX_DICE, MAX_DICE, description="dice (or bonus) beyond traits"),
        "modifiers": {"type": "array", "items": modifier, "maxItems": 20},
        "label": {**_TEXT, "maxLength": 200, "description": "what the roll is for"},
    }


def request_field_schemas(system: str) -> dict[str, dict[str, Any]]:
    """Every key a check request of ``system`` may carry, with its JSON schema."""
    roll = _roll_fields()
    fields: dict[str, dict[str, Any]] = {
        **roll,
        "visibility": {"type": "string", "enum": list(Visibility.values)},
        "task": {**_TEXT, "maxLength": 120, "description": "names a task for retries"},
        "faces": {
            "type": "array",
            "items": {
                "oneOf": [
                    {"type": "integer"},
                    {"type": "array", "items": {"type": "integer"}, "maxItems": MAX_FACES},
                ]
            },
            "maxItems": MAX_FACES,
            "description": "physical dice (manual_dice campaigns only): the faces, or one list "
            "per roll",
        },
        "call": {**_ID, "description": "answers the GM's call for a check"},
        "client_seed": {
            "type": "string",
            "pattern": f"^[0-9a-fA-F]{{1,{MAX_CLIENT_SEED}}}$",
            "description": "the roller's entropy, bound into the faces (docs/verification.md)",
        },
        "willpower": {**_BOOL, "description": "spend a point of Willpower (RULES 2.11)"},
        "difficulty": _int_schema(2, 10),
        "automatic": _BOOL,
        "not_escalating": {**_BOOL, "description": "GM: a failure is not a failed attempt"},
        "life_or_death": {**_BOOL, "description": "GM: a life-or-death action"},
        "again": {"type": "integer", "enum": [10, 9, 8], "nullable": True},
        "rote": _BOOL,
        "exceptional_at": _int_schema(1, 10),
        "extra_successes": _int_schema(0, 10),
        "specialty": {**_TEXT, "maxLength": 100, "description": "a specialty of a rolled skill"},
        "target": _int_schema(1, 40, nullable=True),
        "focus": {**_TEXT, "maxLength": 100, "description": "a focus of the rolled ability"},
        "active": _BOOL,
        "focus_required": _BOOL,
        "helpers": {
            "type": "array",
            "items": _int_schema(1, 2**31 - 1),
            "maxItems": 8,
            "uniqueItems": True,
            "description": "teamwork: other characters' rolls of this session (their seq)",
        },
        "mode": {"type": "string", "enum": ["opposed", "contest"]},
        "resistance": {
            "type": "object",
            "properties": {
                "character": {**_ID, "description": "the resisting character"},
                "traits": {
                    "type": "array",
                    "items": {**_TEXT, "minLength": 1, "maxLength": 100},
                    "minItems": 1,
                    "maxItems": 2,
                    "description": "their resistance traits, read from their sheet",
                },
                "value": _int_schema(0, MAX_RESISTANCE, description="a bare rating (an NPC)"),
                "willpower": {
                    **_BOOL,
                    "description": "the resisting character spends 1 Willpower: +2 resistance",
                },
            },
            # Traits (read from a character's sheet) or a bare rating, never both.
            "oneOf": [
                {"required": ["character", "traits"], "not": {"required": ["value"]}},
                {"required": ["value"], "not": {"required": ["traits"]}},
            ],
            "additionalProperties": False,
            "description": "CofD: the target's resistance, subtracted from the pool (not a "
            "modifier: the modifier cap does not cut it)",
        },
    }
    for name in CIRCUMSTANCES.get(system, ()):
        fields[name] = {**_BOOL, "description": "a circumstance (who set it is recorded)"}
    other_side = ROLL_KEYS | set(SYSTEM_KEYS[system])
    fields["against"] = {
        "type": "object",
        "properties": {k: v for k, v in fields.items() if k in other_side and k != "willpower"},
        "additionalProperties": False,
        "description": "the other side of an opposed or resisted roll",
    }
    action = {k: v for k, v in fields.items() if k in ROLL_KEYS | {"difficulty"}}
    fields["actions"] = {
        "type": "array",
        "items": {"type": "object", "properties": action, "additionalProperties": False},
        "minItems": 2,
        "maxItems": MAX_ACTIONS,
        "description": "a multiple-action declaration (RULES 2.9)",
    }
    return fields


def roll_request_keys(system: str) -> set[str]:
    """The keys ``check_roll`` lets through for a campaign of ``system``."""
    return COMMON_KEYS | {"call"} | set(SYSTEM_KEYS[system]) | KIND_KEYS[system]


def call_request_keys(system: str) -> set[str]:
    """The keys a GM's call for a check fixes (``calls.call_for_check``)."""
    return (COMMON_KEYS | set(SYSTEM_KEYS[system])) - ANSWER_KEYS


def request_schema(system: str, keys: set[str]) -> dict[str, Any]:
    fields = request_field_schemas(system)
    return {
        "type": "object",
        "properties": {key: fields[key] for key in sorted(keys)},
        "additionalProperties": False,
    }


def refuse_unknown_fields(
    data: Mapping[str, Any], allowed: set[str], system: str, prefix: str = ""
) -> None:
    """A request names only fields its check has; the first unknown one (sorted) is the 400."""
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InvalidInput(
            f"{prefix}{unknown[0]}", _("not a field of a {system} check").format(system=system)
        )


def text_field(data: Mapping[str, Any], key: str, max_length: int) -> str:
    value = data.get(key) or ""
    if not isinstance(value, str) or len(value) > max_length:
        raise InvalidInput(key, _("must be text of at most {n} characters").format(n=max_length))
    return value.strip()


MAX_TASK = 120  # characters of a check's task as typed (its key may be longer: "ß" is "ss")


def task_field(data: Mapping[str, Any]) -> str:
    """A check's task, as a roll, its odds, a reset and a call take it."""
    return text_field(data, "task", MAX_TASK)


def parse_uuid(value: Any, field: str) -> uuid.UUID:
    """Any spelling of a UUID (case, braces, ``urn:uuid:``, no dashes) to the one value, so
    that an id names one thing however it is written."""
    if isinstance(value, uuid.UUID):
        return value
    if not isinstance(value, str):
        raise InvalidInput(field, _("is not an id"))
    try:
        return uuid.UUID(value.strip())
    except ValueError:
        raise InvalidInput(field, _("is not an id")) from None


def client_seed_field(value: Any) -> str | None:
    """The player's entropy (docs/verification.md): hex digits, bound into the faces."""
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not 0 < len(value) <= MAX_CLIENT_SEED
        or any(c not in "0123456789abcdef" for c in value.lower())
    ):
        raise InvalidInput("client_seed", f"must be 1 to {MAX_CLIENT_SEED} hexadecimal digits")
    return value.lower()


def find_character(campaign: Campaign, value: Any, field: str = "character") -> Character | None:
    if value in (None, ""):
        return None
    character_id = parse_uuid(value, field)
    character = Character.objects.filter(campaign=campaign, pk=character_id).first()
    if character is None:
        raise NotFound(field, _("no such character in this campaign"))
    return character


MAX_CALLED = 20  # characters one call for a check (or one group check in the roll box) names


def find_characters(campaign: Campaign, values: Any, field: str = "characters") -> list[Character]:
    """The characters a group check names (a GM's call, or the roll box's line for several)."""
    if not isinstance(values, list) or not 1 <= len(values) <= MAX_CALLED:
        raise InvalidInput(field, _("name 1 to 20 characters"))
    found = [find_character(campaign, value, field) for value in values]
    if None in found:  # an empty id is an NPC for one roll, never a member of a group
        raise InvalidInput(field, _("is not an id"))
    return [character for character in found if character is not None]


def helper_checks(
    campaign: Campaign,
    session: Session,
    data: Mapping[str, Any],
    membership: Membership,
    character: Character | None,
) -> list[Check]:
    """RULES 3.7 (#12, item 9): other characters' rolls of this session, each used once and one
    per helping character, that the one naming them may see (the GM may name any), and never the
    primary's own."""
    seqs = data.get("helpers") or []
    if (
        not isinstance(seqs, list)
        or not all(isinstance(s, int) and not isinstance(s, bool) for s in seqs)
        or len(seqs) > 8
    ):
        raise InvalidInput("helpers", _("expected a list of at most 8 check numbers (seq)"))
    if len(set(seqs)) != len(seqs):
        raise InvalidInput("helpers", _("name each helper roll once"))
    # One read: the rolls, and whether another roll has used each already.
    used = RuleUse.objects.filter(campaign=campaign, rule="helper", check_seq=OuterRef("seq"))
    helpers = list(
        Check.objects.filter(campaign=campaign, seq__in=seqs)
        .annotate(used_as_helper=Exists(used))
        .order_by("seq")
    )
    if len(helpers) != len(seqs):
        raise NotFound("helpers", _("a helper roll is not a check of this campaign"))
    for helper in helpers:  # a hidden helper's successes would show in this roll's pool
        require_may_see(helper, membership, field="helpers")
    for helper in helpers:
        if helper.session_id != session.pk or helper.kind != "single":
            raise InvalidInput(
                "helpers", _("check #{seq} is not a roll of this session").format(seq=helper.seq)
            )
        if character is not None and helper.character_id == character.pk:
            raise InvalidInput(
                "helpers", _("check #{seq} is this character's own roll").format(seq=helper.seq)
            )
        if helper.data.get("helpers"):
            raise InvalidInput(
                "helpers", _("check #{seq} is a primary roll, not a helper").format(seq=helper.seq)
            )
    named = [helper.character_id for helper in helpers if helper.character_id is not None]
    if len(set(named)) != len(named):  # each helper rolls once (the GM's NPC rolls are many)
        raise InvalidInput("helpers", _("name one roll per helping character"))
    if any(helper.used_as_helper for helper in helpers):
        raise Conflict("helpers", _("a helper roll has already been added to another roll"))
    return helpers


def require_helpers_shown(
    campaign: Campaign, helpers: list[Check], visibility: str, audience: list[int]
) -> None:
    """RULES 3.7: a helper's successes (or its dramatic failure's -4) show in the primary's pool,
    so a helper hidden from anyone who may see the primary is refused (the GM reveals it first,
    or the primary is rolled as hidden as it): naming it would tell its result, unrevealed. Who
    may see either is `may_see`'s to say, for every member and for whoever joins later."""
    table = outsider(campaign.pk)
    hidden = [helper for helper in helpers if not may_see(helper, table)]
    if not hidden:
        return
    primary = Facts(visibility, audience=audience)
    viewers = [table, *Membership.objects.filter(campaign=campaign)]
    for helper in hidden:
        if any(may_see(primary, viewer) and not may_see(helper, viewer) for viewer in viewers):
            raise Conflict(
                "helpers",
                _(
                    "check #{seq} is hidden from some who would see this roll: reveal it first,"
                    " or make this roll as hidden"
                ).format(seq=helper.seq),
            )


def answering_call(
    campaign: Campaign, data: dict[str, Any], read: tuple[uuid.UUID, CheckCall | None] | None = None
) -> CheckCall | None:
    """The call this request answers (None: not an answer), open or closed; ``read``: the call
    as the lock's statement read it (the id it named, the row), else it is read here. Whether
    it is addressed to this character, answered by it already, or closed is decided once the
    character is known (`require_open_to`)."""
    call_id = data.pop("call", None)
    if not call_id:
        return None
    call_id = parse_uuid(call_id, "call")
    if read is not None and read[0] == call_id:
        call = read[1]
    else:
        call = CheckCall.objects.filter(campaign=campaign, pk=call_id).first()
    if call is None:
        raise NotFound("call", _("no open call for a check with this id"))
    return call


def require_open_to(call: CheckCall, character: Character | None) -> None:
    """Refuse an answer to ``call`` for ``character``: not one it names, one that has answered,
    or a call the GM closed. In that order: a call closes by itself once every character it
    names has answered, so a closed call refused first would tell a player whose character it
    does not name that the others have answered, with rolls hidden from them."""
    if character is None or str(character.pk) not in call.character_ids:
        raise NotAllowed("call", _("this call for a check is not addressed to this character"))
    if str(character.pk) in call.answered:
        raise Conflict("call", _("this character has already answered the call"))
    if call.closed:
        raise NotFound("call", _("no open call for a check with this id"))


def assemble_from_sheet(
    campaign: Campaign,
    who: Character | None,
    spec: Mapping[str, Any],
    state: RollContext,
    prefix: str = "",
) -> Assembled:
    """Assemble a roll from a character's sheet by its system's template: any spelling of a
    trait names it; a trait the sheet lacks but the system has counts as 0 dots and is marked
    ``missing`` in the breakdown (a GM's call must not fail on one sheet's gap); a trait the
    system does not have is refused."""
    sheet = who.traits if who else None
    names = spec.get("traits")
    missing: list[str] = []
    if who is not None and isinstance(names, list) and names:
        try:
            keys, sheet, missing = sheet_for_roll(campaign.system, who.traits, names)
        except RuleError:  # perhaps a custom trait another sheet of the campaign has
            keys, sheet, missing = call_rules(
                sheet_for_roll,
                campaign.system,
                who.traits,
                names,
                custom_traits(campaign),
                prefix=prefix,
            )
        spec = {**spec, "traits": keys}
    assembled = call_rules(
        assemble, campaign.system, sheet, spec, campaign.options, state, prefix=prefix
    )
    for line in assembled.breakdown[: len(missing) + len(names or [])]:
        if line["label"] in missing and line["value"] == 0:
            line["missing"] = True
    return assembled


def custom_traits(campaign: Campaign) -> dict[str, str]:
    """Trait names on the campaign's sheets that its template does not list: name → group."""
    names: dict[str, str] = {}
    for traits in Character.objects.filter(campaign=campaign).values_list("traits", flat=True):
        for group, values in (traits or {}).items():
            for name in values if isinstance(values, dict) else ():
                names.setdefault(name, group)
    return names


# CofD: a resistance (the target's trait subtracted from the roller's pool, "vs Composure").
RESISTANCE_KEYS = {"character", "traits", "value", "willpower"}
MAX_RESISTANCE = 20


def read_resistance(
    campaign: Campaign,
    membership: Membership,
    data: Mapping[str, Any],
    roller: Character | None,
    called: bool = False,
) -> dict[str, Any] | None:
    """CofD's ``resistance``: ``{"character"?, "traits"? | "value"?, "willpower"?}`` read into
    ``{"value", "label", "willpower", "character"}`` for the assembly, with ``"traits"`` and
    ``"resister_name"`` when traits were named (a reader's words for the line: README, Resistance).

    The traits are read from the resisting character's sheet (a trait it lacks counts 0, as in a
    roll); ``value`` is a bare rating (an NPC without a sheet). ``willpower`` spends 1 of the
    resisting character's Willpower for +2 to the trait: whoever controls that character
    declares it (the GM, its player, or the GM's call), never the roller of another's side.
    """
    raw = data.get("resistance")
    if raw is None:
        return None
    if campaign.system != "cofd":
        message = _("not a field of a {system} check").format(system=campaign.system)
        raise InvalidInput("resistance", message)
    if not isinstance(raw, Mapping) or set(raw) - RESISTANCE_KEYS:
        raise InvalidInput(
            "resistance", _("a resistance has character, traits or value, and willpower")
        )
    other = find_character(campaign, raw.get("character"), "resistance.character")
    if other is not None and roller is not None and other.pk == roller.pk:
        raise InvalidInput("resistance.character", _("a character does not resist their own roll"))
    traits, value = raw.get("traits"), raw.get("value")
    if (traits is None) == (value is None):
        raise InvalidInput("resistance", _("name the resisting traits or give the rating"))
    if traits is not None:
        if other is None:
            raise InvalidInput(
                "resistance.character", _("whose traits these are: name the character")
            )
        if (
            not isinstance(traits, list)
            or not 1 <= len(traits) <= 2
            or not all(isinstance(name, str) for name in traits)
        ):
            raise InvalidInput("resistance.traits", _("name one or two traits"))
        keys, sheet, _missing = call_rules(
            sheet_for_roll, campaign.system, other.traits, traits, prefix="resistance."
        )
        value = sum(
            next(sheet[g][key] for g in ("attributes", "skills") if key in sheet.get(g, {}))
            for key in keys
        )
        label = f"{' + '.join(keys)} ({other.name})"
        in_words = {"traits": list(keys), "resister_name": other.name}  # for the reader's words
    else:
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or not 0 <= value <= MAX_RESISTANCE
        ):
            raise InvalidInput(
                "resistance.value",
                _("expected an integer from {low} to {high}").format(low=0, high=MAX_RESISTANCE),
            )
        label = str(value) if other is None else f"{value} ({other.name})"
        in_words = {}
    willpower = raw.get("willpower", False)
    if not isinstance(willpower, bool):
        raise InvalidInput("resistance.willpower", _("expected true or false"))
    if willpower:
        if other is None:
            raise InvalidInput("resistance.willpower", _("Willpower is spent by a character"))
        controls = membership.role == Role.GM or (
            membership.role == Role.PLAYER and other.owner_id == membership.user_id
        )
        if not (controls or called):
            raise NotAllowed(
                "resistance.willpower",
                _("Willpower is spent by whoever plays {name}").format(name=other.name),
            )
    return {
        "value": value,
        "label": label[:60],
        "willpower": willpower,
        "character": str(other.pk) if other is not None else None,
        **in_words,
    }


def with_resistance(
    campaign: Campaign,
    membership: Membership,
    spec: Mapping[str, Any],
    roller: Character | None,
    called: bool = False,
) -> dict[str, Any]:
    """``spec`` with its resistance read (``read_resistance``), ready for the assembly."""
    spec = dict(spec)
    resistance = read_resistance(campaign, membership, spec, roller, called)
    if resistance is not None:
        spec["resistance"] = resistance
    return spec
