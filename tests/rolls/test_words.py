"""A breakdown line named as the reader says it (rolls.words.line_label; render.js's lineLabel
says it the same way on the pages: tests/browser/test_traits_in_russian.py)."""

from __future__ import annotations

import pytest
from django.utils import translation

from rolls.words import line_label

RESISTANCE = {"label": "Strength (Bob)", "value": -2, "kind": "resistance"}


# Each line, and its name on a Russian and on an English page (tests/browser's
# test_the_pages_name_each_line_as_the_server_does holds render.js to the same).
LINES = [
    # the server's own lines, whatever their English label
    ({"label": "Willpower", "value": 3, "kind": "willpower"}, "Сила воли", "Willpower"),
    (
        {"label": "multiple actions", "value": -2, "kind": "actions"},
        "несколько действий",
        "multiple actions",
    ),
    (
        {"label": "attacker's successes", "value": -1, "kind": "opposed"},
        "успехи противника",
        "opponent's successes",
    ),
    ({"label": "pool", "value": 2, "kind": "dice"}, "доп. кубики", "extra dice"),
    # a resistance's traits and whose they are; an event written before it kept them: its label
    (
        {**RESISTANCE, "traits": ["Strength"], "resister_name": "Bob"},
        "Сила (Bob)",
        "Strength (Bob)",
    ),
    (RESISTANCE, "Strength (Bob)", "Strength (Bob)"),
    ({"label": "3 (Bob)", "value": -3, "kind": "resistance"}, "3 (Bob)", "3 (Bob)"),
    # a resistance recorded with the group's name as its label (before it was the server's)
    ({"label": "resistance", "value": -2, "kind": "resistance"}, "сопротивление", "resistance"),
    # a player's modifier in a group the server also writes keeps its own words
    ({"label": "lucky charm", "value": 1, "kind": "dice"}, "lucky charm", "lucky charm"),
    ({"label": "blessing", "value": 1, "kind": "bonus"}, "blessing", "blessing"),
    ({"label": "fear", "value": -1, "kind": "willpower"}, "fear", "fear"),
    # a line without a label (none the server writes) names nothing
    ({"value": 1, "kind": "circumstance"}, "", ""),
    # a trait by its key; a modifier by its own words, or by its group when it has none
    ({"label": "Wits", "value": 3, "kind": "attributes"}, "Сообразительность", "Wits"),
    ({"label": "flashlight", "value": 1, "kind": "equipment"}, "flashlight", "flashlight"),
    ({"label": "retry", "value": -1, "kind": "retry"}, "повтор", "retry"),
]


@pytest.mark.parametrize(("line", "russian", "english"), LINES)
def test_a_line_is_named_in_the_readers_words(line, russian, english):
    with translation.override("ru"):
        assert line_label("cofd", line) == russian
    with translation.override("en"):
        assert line_label("cofd", line) == english
