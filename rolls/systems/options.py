"""Per-campaign rule options (RULES.md A.2): the table, the defaults and their validation.

Options are stored without the system prefix: a Storyteller campaign's options are
``{"free_botch": "per_character", "retry_escalation": "seed", "manual_dice": False}``.
``manual_dice`` (players enter the faces of physical dice) exists in every system.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rolls.systems.errors import RuleError


@dataclass(frozen=True)
class Option:
    default: Any
    choices: tuple[Any, ...] | None = None  # None: a bool or an int in [low, high]
    low: int | None = None
    high: int | None = None
    help: str = ""

    def validate(self, name: str, value: Any) -> Any:
        if self.choices is not None:
            if value not in self.choices:
                allowed = ", ".join(map(str, self.choices))
                raise RuleError(
                    field=f"options.{name}", message=f"{value!r} is not one of {allowed}"
                )
            return value
        if isinstance(self.default, bool):
            if not isinstance(value, bool):
                raise RuleError(
                    field=f"options.{name}", message=f"expected true or false, got {value!r}"
                )
            return value
        if not isinstance(value, int) or isinstance(value, bool):
            raise RuleError(field=f"options.{name}", message=f"expected an integer, got {value!r}")
        if (self.low is not None and value < self.low) or (
            self.high is not None and value > self.high
        ):
            raise RuleError(
                field=f"options.{name}", message=f"{value} is outside {self.low}..{self.high}"
            )
        return value

    def json_schema(self) -> dict[str, Any]:
        """The values ``validate`` accepts, as a JSON schema (the API's schema shows it)."""
        if self.choices is not None:
            return {"enum": list(self.choices), "description": self.help}
        if isinstance(self.default, bool):
            return {"type": "boolean", "description": self.help}
        schema: dict[str, Any] = {"type": "integer", "description": self.help}
        if self.low is not None:
            schema["minimum"] = self.low
        if self.high is not None:
            schema["maximum"] = self.high
        return schema


_COMMON: dict[str, Option] = {
    "manual_dice": Option(
        False, help="Players type in the faces of physical dice; such rolls are marked manual."
    ),
}

RULE_OPTIONS: dict[str, dict[str, Option]] = {
    "d6pool": {
        "desperate": Option(
            "all_hits",
            ("all_hits", "all_sixes"),
            help="Pool below 1 die: success only if every die shows 4-6 (all_hits) or 6.",
        ),
        "adrenaline_dice": Option(
            2, low=0, high=10, help="Extra dice when the GM marks a life-or-death physical action."
        ),
    },
    "storyteller": {
        "free_botch": Option(
            "per_character",
            ("per_character", "per_table", "off"),
            help="The first botch each session becomes a plain failure (per character or table).",
        ),
        "retry_escalation": Option(
            "seed",
            ("seed", "linear", "off"),
            help="Retry difficulty: +1, +3, +6 … (seed), +1, +2, +3 … (linear) or none.",
        ),
        "stressful": Option(
            False,
            help="Default for rolls that do not say: under stress (no automatic success).",
        ),
    },
    "nice_damnit": {
        "extra_nice": Option(
            True, help="After the roll, take up to 2 extra Nice!, each with a Damnit! (cap 9)."
        ),
    },
    "age": {
        "fortune_dice": Option(
            True, help="After the roll, pay Fortune to set one die (the Drama Die costs double)."
        ),
    },
    "cofd": {
        "intentional_dramatic_failure": Option(
            "per_chapter",
            ("per_chapter", "per_scene", "unlimited", "off"),
            help="Turn a failure into a dramatic failure for a Beat: how often per character.",
        ),
        "beat_on_dramatic_failure": Option(
            False, help="A natural dramatic failure (1 on a chance die) also earns a Beat."
        ),
        "retry_penalty": Option(
            True, help="Under pressure, attempt k of a task has -(k-1) dice (not extended actions)."
        ),
        "modifier_cap": Option(
            5, low=0, high=20, help="Each modifier group is capped at ±N; bonuses before penalties."
        ),
        "chance_die_explodes": Option(
            False, help="A 10 on a chance die explodes (nWoD 1st edition); off in CofD 2e."
        ),
        "under_pressure": Option(
            False, help="Default for rolls that do not say: under time pressure (retries cost)."
        ),
        "extended": Option(
            False, help="Default for rolls that do not say: an extended action (no retry penalty)."
        ),
    },
}


def option_table(system_id: str) -> dict[str, Option]:
    if system_id not in RULE_OPTIONS:
        raise RuleError(f"unknown game system {system_id!r}", field="system")
    return {**RULE_OPTIONS[system_id], **_COMMON}


def default_options(system_id: str) -> dict[str, Any]:
    return {name: option.default for name, option in option_table(system_id).items()}


def validate_options(
    system_id: str, changes: dict[str, Any], current: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Return the complete option set after applying ``changes``; unknown names are refused."""
    if not isinstance(changes, dict):
        raise RuleError("expected an object of option names to values", field="options")
    table = option_table(system_id)
    merged = dict(current) if current is not None else default_options(system_id)
    for name, value in changes.items():
        if name not in table:
            known = ", ".join(sorted(table))
            raise RuleError(
                field=f"options.{name}", message=f"unknown option for {system_id} (known: {known})"
            )
        merged[name] = table[name].validate(name, value)
    return merged
