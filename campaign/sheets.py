"""The sheet templates as the pages and the API deliver them, in the active language.

The pure template (``rolls.systems.sheets``) holds the traits and their Russian names; the group
and resource names are translated here, once, for the API, the pages and their scripts.
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import get_language, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from rolls.systems.sheets import NICE_DAMNIT_RANKS, template_document

GROUPS: dict[str, dict[str, Any]] = {
    "d6pool": {
        "attributes": pgettext_lazy("d6pool", "Parameters"),
        "abilities": pgettext_lazy("d6pool", "Abilities"),
    },
    "storyteller": {
        "attributes": pgettext_lazy("storyteller", "Attributes"),
        "abilities": pgettext_lazy("storyteller", "Abilities"),
    },
    "cofd": {
        "attributes": pgettext_lazy("cofd", "Attributes"),
        "skills": pgettext_lazy("cofd", "Skills"),
        "specialties": pgettext_lazy("cofd", "Specialties"),
    },
    "age": {
        "abilities": pgettext_lazy("age", "Abilities"),
        "focuses": pgettext_lazy("age", "Focuses"),
    },
    "nice_damnit": {
        "areas": pgettext_lazy("nice_damnit", "Areas"),
        "skills": pgettext_lazy("nice_damnit", "Skills"),
        "attributes": pgettext_lazy("nice_damnit", "Attributes"),
    },
}

RESOURCES = {
    "beats": _("Beats"),
    "willpower": _("Willpower"),
    "fortune": _("Fortune"),
}

RANKS = {
    "perk": _("perk"),
    "novice_1": _("novice I"),
    "novice_2": _("novice II"),
    "pro_1": _("pro I"),
    "pro_2": _("pro II"),
    "pro_3": _("pro III"),
    "master_1": _("master I"),
    "master_2": _("master II"),
    "master_3": _("master III"),
}
assert set(RANKS) == set(NICE_DAMNIT_RANKS)


def sheet_template(system: str) -> dict[str, Any]:
    """The system's sheet template with every label in the active language."""
    document = template_document(system, get_language() or "en")
    for group in document["groups"]:
        group["label"] = str(GROUPS[system].get(group["key"], group["key"]))
    for resource in document["resources"]:
        resource["label"] = str(RESOURCES.get(resource["key"], resource["key"]))
    if document["rank_values"] is not None:
        document["rank_values"] = {
            rank: {"bonus": bonus, "label": str(RANKS[rank])}
            for rank, bonus in NICE_DAMNIT_RANKS.items()
        }
    return document
