"""Character sheets per system: validation against the system's template (``sheets.py``).

A sheet is ``{"<group>": {"<trait key>": value, …}, …}``. Validation checks every field and
reports all the bad ones at once (``SheetErrors``); it returns a clean copy in which any spelling
of a listed trait (``wits``, ``Сообразительность``) is stored under its key (``Wits``).
"""

from __future__ import annotations

from typing import Any

from rolls.systems.errors import RuleError, SheetErrors
from rolls.systems.errors import gettext_noop as _
from rolls.systems.sheets import (
    FORBIDDEN_CHARACTERS,
    NICE_DAMNIT_RANKS,
    TEMPLATES,
    GroupTemplate,
    SheetTemplate,
    fold,
    listed_trait,
    looks_rated,
)

__all__ = [
    "MAX_NAME",
    "MAX_TRAITS_PER_GROUP",
    "NICE_DAMNIT_RANKS",
    "RESOURCES",
    "TRAIT_GROUPS",
    "validate_resources",
    "validate_traits",
]

MAX_NAME = 60
MAX_TRAITS_PER_GROUP = 80
MAX_CHIPS = 20

# Group keys per system, and each system's resources with their defaults (read by the pages).
TRAIT_GROUPS: dict[str, tuple[str, ...]] = {
    system: tuple(group.key for group in template.groups) for system, template in TEMPLATES.items()
}
RESOURCES: dict[str, dict[str, int]] = {
    system: {resource.key: resource.default for resource in template.resources}
    for system, template in TEMPLATES.items()
}


def _template(system_id: str) -> SheetTemplate:
    template = TEMPLATES.get(system_id) if isinstance(system_id, str) else None
    if template is None:
        raise RuleError(
            _("unknown game system {system}"), field="system", params={"system": system_id}
        )
    return template


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Collector:
    """Gathers one error per field, so a sheet's every problem is reported at once."""

    def __init__(self) -> None:
        self.errors: dict[str, RuleError] = {}

    def add(self, where: str, message: str, **params: Any) -> None:
        self.errors.setdefault(where, RuleError(message, field=where, params=params or None))

    def raise_any(self) -> None:
        if self.errors:
            raise SheetErrors(self.errors)


def _custom_name(errors: _Collector, where: str, name: Any) -> str | None:
    """A name the template does not list: plain text, not a rating in disguise."""
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > MAX_NAME:
        errors.add(where, _("a name is non-empty text of at most {n} characters"), n=MAX_NAME)
        return None
    name = " ".join(name.split())
    rated = looks_rated(name)
    if rated:
        base, value, extras = rated
        if extras:
            errors.add(
                where,
                _(
                    "«{name}» looks like a rating and a specialty: enter {base} with {value} "
                    "and add «{extra}» as a chip"
                ),
                name=name,
                base=base,
                value=value,
                extra=", ".join(extras),
            )
        else:
            errors.add(
                where,
                _("«{name}» looks like a rating: enter {base} with the value {value}"),
                name=name,
                base=base,
                value=value,
            )
        return None
    if FORBIDDEN_CHARACTERS & set(name):
        errors.add(
            where,
            _("a name cannot contain any of {characters}"),
            characters=" ".join(sorted(FORBIDDEN_CHARACTERS)),
        )
        return None
    return name


def _trait_key(
    errors: _Collector, system_id: str, group: GroupTemplate, where: str, name: Any
) -> str | None:
    listed = listed_trait(system_id, name) if isinstance(name, str) else None
    if listed and listed[0] == group.key:
        return listed[1]
    if not listed and isinstance(name, str) and looks_rated(name):
        return _custom_name(errors, where, name)  # says how to enter the rating instead
    if not group.open:
        if listed:
            errors.add(
                where,
                _("{name} belongs in another group ({group})"),
                name=name,
                group=listed[0],
            )
        else:
            errors.add(
                where,
                _("«{name}» is not one of this system's traits here ({known})"),
                name=name,
                known=", ".join(t.key for t in group.traits),
            )
        return None
    if listed:  # a listed name of another group: typing "Wits" under abilities is a slip
        errors.add(
            where, _("{name} belongs in another group ({group})"), name=name, group=listed[0]
        )
        return None
    return _custom_name(errors, where, name)


def _value(errors: _Collector, where: str, group: GroupTemplate, value: Any) -> Any:
    if group.kind == "rank":
        if value not in NICE_DAMNIT_RANKS:
            errors.add(
                where, _("the rank must be one of {ranks}"), ranks=", ".join(NICE_DAMNIT_RANKS)
            )
        return value
    if not _is_int(value) or not group.low <= value <= group.high:
        errors.add(
            where, _("expected a whole number from {low} to {high}"), low=group.low, high=group.high
        )
    return value


def _chips(errors: _Collector, where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or len(value) > MAX_CHIPS:
        errors.add(where, _("expected a list of at most {n} names"), n=MAX_CHIPS)
        return []
    clean: list[str] = []
    for index, chip in enumerate(value):
        name = _custom_name(errors, f"{where}.{index}", chip)
        if name and fold(name) not in {fold(c) for c in clean}:
            clean.append(name)
    return clean


def validate_traits(system_id: str, traits: Any) -> dict[str, dict[str, Any]]:
    template = _template(system_id)
    if not isinstance(traits, dict):
        raise RuleError(_("expected an object of trait groups"), field="traits")
    errors = _Collector()
    for unknown in sorted(set(traits) - {g.key for g in template.groups}):
        errors.add(
            f"traits.{unknown}",
            _("not a trait group of this system (groups: {groups})"),
            groups=", ".join(g.key for g in template.groups),
        )
    clean: dict[str, dict[str, Any]] = {}
    for group in template.groups:
        values = traits.get(group.key, {})
        where = f"traits.{group.key}"
        if not isinstance(values, dict) or len(values) > MAX_TRAITS_PER_GROUP:
            errors.add(where, _("expected an object of at most {n} traits"), n=MAX_TRAITS_PER_GROUP)
            continue
        cleaned: dict[str, Any] = {}
        for raw_name, value in values.items():
            here = f"{where}.{raw_name}" if str(raw_name).strip() else where
            if group.kind == "chips":
                key = _chip_owner(
                    errors, system_id, template.group(group.of), here, raw_name, traits
                )
                chips = _chips(errors, here, value)
            else:
                key = _trait_key(errors, system_id, group, here, raw_name)
                chips = _value(errors, here, group, value)
            if key is None:
                continue
            if key in cleaned:
                errors.add(here, _("{name} is on the sheet twice"), name=key)
                continue
            cleaned[key] = chips
        clean[group.key] = cleaned
    errors.raise_any()
    return clean


def _chip_owner(
    errors: _Collector,
    system_id: str,
    owner_group: GroupTemplate,
    where: str,
    name: Any,
    traits: dict[str, Any],
) -> str | None:
    """The trait a list of chips hangs on (a specialty's skill, a focus's ability)."""
    listed = listed_trait(system_id, name) if isinstance(name, str) else None
    if listed and listed[0] == owner_group.key:
        return listed[1]
    on_sheet = traits.get(owner_group.key)
    if owner_group.open and isinstance(on_sheet, dict) and name in on_sheet:
        return name
    errors.add(
        where,
        _("«{name}» is not a trait of the group {group}"),
        name=name,
        group=owner_group.key,
    )
    return None


def validate_resources(system_id: str, resources: Any, *, starting: bool = False) -> dict[str, int]:
    """All of the system's resources, defaults filled in. ``starting``: a player's own new
    character, whose resources may not exceed the template's starting maximum."""
    template = _template(system_id)
    if not isinstance(resources, dict):
        raise RuleError(_("expected an object"), field="resources")
    known = {resource.key: resource for resource in template.resources}
    errors = _Collector()
    clean = {key: resource.default for key, resource in known.items()}
    for name, value in resources.items():
        where = f"resources.{name}"
        resource = known.get(name)
        if resource is None:
            errors.add(
                where,
                _("not a resource of this system (known: {known})"),
                known=", ".join(known) or "—",
            )
            continue
        high = min(resource.high, resource.start_max) if starting else resource.high
        if not _is_int(value) or not resource.low <= value <= high:
            errors.add(
                where,
                _("expected a whole number from {low} to {high}"),
                low=resource.low,
                high=high,
            )
            continue
        clean[name] = value
    errors.raise_any()
    return clean


def sheet_for_roll(
    system_id: str,
    sheet: dict[str, Any] | None,
    names: list[str],
    also_known: dict[str, str] | None = None,
) -> tuple[list[str], dict[str, Any], list[str]]:
    """The traits a roll names, as keys; the sheet to roll them from; the ones it lacks.

    A trait the system has (its template lists it, or ``also_known`` — custom names on other
    sheets of the campaign, name → group — does) but this sheet lacks counts as 0 dots: a GM's
    call for several characters must not fail because one sheet leaves a skill out. A name the
    system does not have is refused.
    """
    template = _template(system_id)
    rollable = template.rollable_groups()
    sheet = {
        group: dict(values) for group, values in (sheet or {}).items() if isinstance(values, dict)
    }
    on_sheet = {fold(name): (group, name) for group in rollable for name in sheet.get(group, {})}
    known = {fold(name): (group, name) for name, group in (also_known or {}).items()}
    keys: list[str] = []
    missing: list[str] = []
    for name in names:
        if not isinstance(name, str):
            keys.append(name)  # assembly reports the malformed request
            continue
        listed = listed_trait(system_id, name)
        if listed and listed[0] not in rollable:
            raise RuleError(
                _("{name} is the GM's attribute; it is not added to a roll"),
                field="traits",
                params={"name": listed[1]},
            )
        found = on_sheet.get(fold(listed[1] if listed else name)) or listed or known.get(fold(name))
        if found is None:
            raise RuleError(
                _("{name} is not a trait of this system"), field="traits", params={"name": name}
            )
        group, key = found
        keys.append(key)
        if key not in sheet.get(group, {}):
            kind = template.group(group).kind
            sheet.setdefault(group, {})[key] = "perk" if kind == "rank" else 0
            missing.append(key)
    return keys, sheet, missing


def trait_changes(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """What a sheet edit changed, trait by trait (``None``: added or removed)."""
    changes = []
    for group in sorted(set(before) | set(after)):
        old, new = before.get(group) or {}, after.get(group) or {}
        for name in sorted(set(old) | set(new)):
            if old.get(name) != new.get(name):
                changes.append(
                    {"group": group, "trait": name, "from": old.get(name), "to": new.get(name)}
                )
    return changes
