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


# What a check rolls (the tail of its breakdown: chance die, desperate roll, the AGE focus's +2)
# comes from the server as `roll_terms` / `terms`; the odds chart and the cards print them.
ROLL_TERMS = {
    "a pool that rolls a chance die or a desperate roll": r"\bpool\s*(<=?|<)\s*[01]\b",
    "a chance die's or a desperate roll's own condition": (
        r"===\s*\"cofd\"\s*\?\s*t\(\"chance_die|\"d6pool\"\s*&&[^\n]*pool"
    ),
    "the AGE focus's +2": r"\bfocus\s*\?\s*2\b|\+\s*\(?[\w.]*focus[\w.]*\s*\?",
    "the default 10-again": r"again\s*!==\s*10",
    "the Drama Die's place among the dice": r"\.die\s*===\s*2\b",
}
# The panels and the sheets show the allowances the server lists per character (`flags`,
# `table_flags` of GET state/), and pick no row from a rule option's mode.
PANEL_CODE = ("panels.js", "sheets.js", "odds.js", "render.js")
PANEL_RULES = {
    "a rule option's mode": (
        r"per_chapter|per_scene|per_character|per_table|\"unlimited\"|fortune_dice"
    ),
    "a rule option read for a row": (
        r"options\b[^.\n;]{0,10}\.(free_botch|intentional_dramatic_failure|retry_escalation|desperate)"
    ),
    "a dramatic-failure allowance": r"dramaticFailureAvailable|dramatic_failure_used",
    "a free botch allowance": r"\.(table_)?free_botch_used",
}


@pytest.mark.parametrize("name", sorted(path.name for path in JS.glob("*.js")))
def test_no_js_decides_what_a_check_rolls(name: str) -> None:
    source = (JS / name).read_text()
    found = {
        what: match.group(0)
        for what, pattern in ROLL_TERMS.items()
        if (match := re.search(pattern, source))
    }
    assert not found, f"{name} decides what a check rolls (the server says it): {found}"


@pytest.mark.parametrize("name", PANEL_CODE)
def test_the_panels_pick_no_row_from_a_rule_option(name: str) -> None:
    source = (JS / name).read_text()
    found = {
        what: match.group(0)
        for what, pattern in PANEL_RULES.items()
        if (match := re.search(pattern, source))
    }
    assert not found, f"{name} decides from rule options what the server lists: {found}"


# Whose characters a member rolls and answers calls for is the server's `acts_for` (the same
# decision as campaign.access.controls_character); no page compares owners with "me".
CONTROLS = r"owner_id\s*===\s*(this\.)?(table\.)?me\b|isGm\s*\|\|\s*\w+\.owner_id"


@pytest.mark.parametrize("name", sorted(path.name for path in JS.glob("*.js")))
def test_no_page_decides_who_controls_a_character(name: str) -> None:
    match = re.search(CONTROLS, (JS / name).read_text())
    assert match is None, f"{name} decides who controls a character: {match.group(0)}"


def test_the_patterns_catch_the_old_code() -> None:
    """The old lines these tests replaced are caught (so the patterns are not vacuous)."""
    old_terms = (
        'tail.push(check.pool <= 0 && system === "cofd" ? t("chance_die") : plural("x", 1));',
        'if (system === "d6pool" && check.pool <= 0) tail.push(t("desperate"));',
        "tail.push(`3d6 ${signed(check.ability + (check.focus ? 2 : 0))}`);",
        'else if (check.again && check.again !== 10) tail.push(t("x"));',
        'const die = change.die === 2 ? t("drama_die") : t("die_n", { n: change.die + 1 });',
    )
    for line in old_terms:
        assert any(re.search(p, line) for p in ROLL_TERMS.values()), line
    old_panels = (
        'if (system === "storyteller" && options.free_botch === "per_character") x();',
        'if (options.intentional_dramatic_failure && !["off", "unlimited"].includes(o)) x();',
        "const mode = (table.campaign.options || {}).intentional_dramatic_failure;",
        "flag(t('table_free_botch'), state.table_free_botch_used)",
    )
    for line in old_panels:
        assert any(re.search(p, line) for p in PANEL_RULES.values()), line
    old_controls = (
        "return this.table.characters.filter((c) => this.gm || c.owner_id === this.table.me.id);",
        "const mine = (character) => table.isGm || character.owner_id === table.me.id;",
    )
    for line in old_controls:
        assert re.search(CONTROLS, line), line


def test_the_hint_does_not_say_once_per_chapter_whatever_the_mode() -> None:
    for path in JS.glob("*.js"):
        assert "once per chapter" not in path.read_text(), path.name
