"""Character sheets per system: which trait groups exist, their ranges, and the resources.

A sheet is ``{"<group>": {"<trait name>": value, …}, …}``. Trait names are free text (tables
rename and add skills), the groups and ranges are the system's. Validation returns a clean copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rolls.systems.errors import RuleError

# Nice!/Damnit! skill ranks (seed 002): the bonus each adds to the roll. "perk" skills
# ("Shooting from horseback I") add nothing; they lift penalties or unlock options.
NICE_DAMNIT_RANKS: dict[str, int] = {
    "perk": 0,
    "novice_1": 1,
    "novice_2": 2,
    "pro_1": 3,
    "pro_2": 4,
    "pro_3": 5,
    "master_1": 6,
    "master_2": 7,
    "master_3": 8,
}


@dataclass(frozen=True)
class Group:
    low: int | None = None
    high: int | None = None
    kind: str = "int"  # int | rank | names (a list of strings per trait, e.g. specialties)


TRAIT_GROUPS: dict[str, dict[str, Group]] = {
    "d6pool": {"attributes": Group(0, 10), "abilities": Group(0, 10)},
    "storyteller": {"attributes": Group(0, 10), "abilities": Group(0, 10)},
    "cofd": {
        "attributes": Group(1, 10),
        "skills": Group(0, 10),
        "specialties": Group(kind="names"),
    },
    "age": {"abilities": Group(-5, 15), "focuses": Group(kind="names")},
    "nice_damnit": {"areas": Group(0, 10), "skills": Group(kind="rank")},
}

# Resources the stateful rules spend and grant; everything else on a sheet is a trait.
RESOURCES: dict[str, dict[str, int]] = {
    "d6pool": {},
    "storyteller": {"willpower": 0},
    "cofd": {"beats": 0, "willpower": 0},
    "age": {"fortune": 0},
    "nice_damnit": {},
}

MAX_NAME = 60
MAX_TRAITS_PER_GROUP = 80


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _clean_name(where: str, name: Any) -> str:
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        raise RuleError(
            field=where, message=f"trait names are non-empty text of at most {MAX_NAME} characters"
        )
    return name.strip()


def validate_traits(system_id: str, traits: Any) -> dict[str, dict[str, Any]]:
    groups = TRAIT_GROUPS.get(system_id)
    if groups is None:
        raise RuleError(f"unknown game system {system_id!r}", field="system")
    if not isinstance(traits, dict):
        raise RuleError("expected an object of trait groups", field="traits")
    unknown = set(traits) - set(groups)
    if unknown:
        raise RuleError(
            field=f"traits.{sorted(unknown)[0]}",
            message=f"not a trait group of {system_id} (groups: {', '.join(groups)})",
        )
    clean: dict[str, dict[str, Any]] = {}
    for group_name, group in groups.items():
        values = traits.get(group_name, {})
        where = f"traits.{group_name}"
        if not isinstance(values, dict) or len(values) > MAX_TRAITS_PER_GROUP:
            raise RuleError(
                field=where, message=f"expected an object of at most {MAX_TRAITS_PER_GROUP} traits"
            )
        cleaned: dict[str, Any] = {}
        for raw_name, value in values.items():
            name = _clean_name(where, raw_name)
            cleaned[name] = _clean_value(f"{where}.{name}", group, value)
        clean[group_name] = cleaned
    return clean


def _clean_value(where: str, group: Group, value: Any) -> Any:
    if group.kind == "rank":
        if value not in NICE_DAMNIT_RANKS:
            raise RuleError(
                field=where, message=f"rank must be one of {', '.join(NICE_DAMNIT_RANKS)}"
            )
        return value
    if group.kind == "names":
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise RuleError(field=where, message="expected a list of names")
        return [_clean_name(where, v) for v in value]
    if not _is_int(value) or not (group.low <= value <= group.high):
        raise RuleError(
            field=where, message=f"expected an integer from {group.low} to {group.high}"
        )
    return value


def validate_resources(system_id: str, resources: Any) -> dict[str, int]:
    allowed = RESOURCES.get(system_id)
    if allowed is None:
        raise RuleError(f"unknown game system {system_id!r}", field="system")
    if not isinstance(resources, dict):
        raise RuleError("expected an object", field="resources")
    clean = dict(allowed)
    for name, value in resources.items():
        if name not in allowed:
            known = ", ".join(allowed) or "none"
            raise RuleError(
                field=f"resources.{name}", message=f"not a resource of {system_id} (known: {known})"
            )
        if not _is_int(value) or not 0 <= value <= 999:
            raise RuleError(field=f"resources.{name}", message="expected an integer from 0 to 999")
        clean[name] = value
    return clean
