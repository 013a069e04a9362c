"""The JS renders the server's decisions and computes no rule (issue #11): no die thresholds, no
follow-up eligibility, no Fortune cost, no reveal rule, no rule-option modes in the feed's code.
The dice marks and the follow-ups come from the server (rolls/systems/marks.py and the
follow-up rules)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

JS = Path(__file__).resolve().parents[1] / "static" / "js"
FEED_CODE = ("render.js", "dice.js", "table.js", "audit.js")

# Each pattern is a way the old code decided a rule in the browser.
RULES = {
    "a face or total compared with a threshold": (
        r"\b(f|face|final|total|result\.\w+)\s*(>=\s*\S|>\s*[1-9])"
    ),
    "a chance die's or a Nice! die's 10": r"===\s*10\s*\?",
    "the caps of Nice!/Damnit!": r"\b9\s*-\s*",
    "the Fortune cost (Drama Die double)": r"\?\s*2\s*:\s*1|\*\s*2\b",
    "a dramatic-failure allowance": r"dramaticFailureAvailable|dramatic_failure_used",
    "a rule option's mode": r"per_chapter|per_scene|\"unlimited\"|fortune_dice|extra_nice\s*!==",
    "the reveal rule": r"isGm\s*&&[^\n]*revealed",
    "who controls a character": r"owner_id\s*===",
}


@pytest.mark.parametrize("name", FEED_CODE)
def test_the_feed_code_decides_no_rule(name: str) -> None:
    source = (JS / name).read_text()
    found = {
        what: match.group(0)
        for what, pattern in RULES.items()
        if (match := re.search(pattern, source))
    }
    assert not found, f"{name} decides rules the server decides: {found}"


def test_the_hint_does_not_say_once_per_chapter_whatever_the_mode() -> None:
    for path in JS.glob("*.js"):
        assert "once per chapter" not in path.read_text(), path.name
