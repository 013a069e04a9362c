"""Each system's name and outcome words, translated: the seeds' own terms («не туда!», botch…).

One source for the pages, the chronicle and anything else that names an outcome to a person.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from django.utils.translation import get_language, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from rolls.checks.assembly import SERVER_LABELS
from rolls.systems.sheets import TEMPLATES, trait_labels

SYSTEM_NAMES = {
    "d6pool": _("d6 pool («wrong way!»)"),
    "storyteller": _("Storyteller (World of Darkness)"),
    "nice_damnit": _("Nice!/Damnit! (2d10)"),
    "age": _("AGE: The Expanse"),
    "cofd": _("Chronicles of Darkness"),
}

# Outcome words per system (contexts keep «неудача» and «провал» apart where the systems do).
OUTCOMES: dict[str, dict[str, Any]] = {
    "d6pool": {
        "success": pgettext_lazy("d6pool outcome", "success"),
        "wrong_way": pgettext_lazy("d6pool outcome", "wrong way!"),
        "failure": pgettext_lazy("d6pool outcome", "failure"),
        "critical_failure": pgettext_lazy("d6pool outcome", "critical failure"),
    },
    "storyteller": {
        "success": pgettext_lazy("storyteller outcome", "success"),
        "failure": pgettext_lazy("storyteller outcome", "failure"),
        "botch": pgettext_lazy("storyteller outcome", "botch"),
        "impossible": pgettext_lazy("storyteller outcome", "impossible"),
    },
    "nice_damnit": {
        "bad": pgettext_lazy("nice_damnit outcome", "bad"),
        "average": pgettext_lazy("nice_damnit outcome", "average"),
        "excellent": pgettext_lazy("nice_damnit outcome", "excellent"),
    },
    "age": {
        "success": pgettext_lazy("age outcome", "success"),
        "failure": pgettext_lazy("age outcome", "failure"),
        "auto_failure": pgettext_lazy("age outcome", "automatic failure"),
        "rolled": pgettext_lazy("age outcome", "rolled"),
    },
    "cofd": {
        "exceptional_success": pgettext_lazy("cofd outcome", "exceptional success"),
        "success": pgettext_lazy("cofd outcome", "success"),
        "failure": pgettext_lazy("cofd outcome", "failure"),
        "dramatic_failure": pgettext_lazy("cofd outcome", "dramatic failure"),
    },
}


def outcome_name(system: str, outcome: str) -> str:
    return str(OUTCOMES.get(system, {}).get(outcome, outcome))


# --- traits -----------------------------------------------------------------------------------
# Sheets and rolls keep a listed trait under its key (its English name, what the API names); a
# reader of Russian is shown the template's Russian label. A custom trait is shown as written.


@cache
def _russian_labels(system: str) -> dict[str, str]:
    return trait_labels(system) if system in TEMPLATES else {}


def _reader_labels(system: str) -> dict[str, str]:
    """The listed traits' names in the reader's language, by key (none: the names are the keys)."""
    return _russian_labels(system) if (get_language() or "").startswith("ru") else {}


def reader_trait_labels() -> dict[str, dict[str, str]]:
    """Each system's listed traits, key → the reader's name, where it differs (the pages' JS)."""
    return {system: labels for system in TEMPLATES if (labels := _reader_labels(system))}


def trait_name(system: str, name: Any) -> Any:
    """A trait as the reader's language names it."""
    return _reader_labels(system).get(name, name) if isinstance(name, str) else name


def traits_text(system: str, names: Iterable[Any] | None) -> str:
    """«Сообразительность + Оккультизм»: a roll's traits as the reader names them."""
    return " + ".join(str(trait_name(system, name)) for name in names or ())


# --- a roll's breakdown -------------------------------------------------------------------------
# A line keeps its English label for the API; the reader is shown a line the server wrote, or a
# modifier labelled with its group's name (a group the cap cut), in these words by its kind.
LINE_NAMES: dict[str, Any] = {
    "dice": _("extra dice"),
    "willpower": _("Willpower"),
    "resistance": _("resistance"),
    "resistance_willpower": _("Willpower to resist"),
    "adrenaline": _("adrenaline"),
    "actions": _("multiple actions"),
    "opposed": _("opponent's successes"),
    "ability": _("ability"),
    "bonus": _("bonus"),
    "retry": _("retry"),
    "teamwork": _("teamwork"),
    "equipment": _("equipment"),
    "circumstance": _("modifier"),
    "difficulty": _("difficulty"),
}


def line_label(system: str, line: Mapping[str, Any]) -> str:
    """A breakdown line's name as the reader says it (static/js/render.js `lineLabel` says it the
    same way): a line the server wrote by its kind, a resistance's traits and whose they are
    («Самообладание + Решимость (Боб)»), a trait, or a modifier's own words."""
    kind, label = line.get("kind"), line.get("label")
    if isinstance(kind, str) and kind in LINE_NAMES:
        server_label = SERVER_LABELS.get(kind, kind)
        if label in (kind, "pool", kind.removesuffix("s"), server_label):
            return str(LINE_NAMES[kind])
    if isinstance(label, str) and label in LINE_NAMES:
        return str(LINE_NAMES[label])
    traits = line.get("traits")
    if kind == "resistance" and isinstance(traits, list) and line.get("resister_name"):
        return f"{traits_text(system, traits)} ({line['resister_name']})"
    return "" if label is None else str(trait_name(system, label))
