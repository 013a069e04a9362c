"""rolls/rules.py: each rule table written once, and no call site restating an option default."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rolls.rules import failed_attempt, option, recorded_failed_attempt
from rolls.systems import SYSTEM_IDS
from rolls.systems.options import option_table
from tests.rolls.trust.conftest import play  # noqa: F401  (a session of every kind of roll)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("system", SYSTEM_IDS)
def test_an_option_reads_the_campaigns_value_else_the_tables_default(system):
    for name, entry in option_table(system).items():
        assert option({}, system, name) == entry.default
        assert option({name: "stored"}, system, name) == "stored"
    with pytest.raises(KeyError):
        option({}, system, "no_such_option")


def test_no_code_outside_the_rules_restates_an_option_default():
    names = {name for system in SYSTEM_IDS for name in option_table(system)}
    alternatives = "|".join(sorted(names))
    pattern = re.compile(r"""\.get\(\s*["'](""" + alternatives + r""")["']""")
    offenders = []
    for package in ("campaign", "eventlog", "pages", "rolls"):
        for path in (ROOT / package).rglob("*.py"):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith("rolls/systems/") or "/migrations/" in relative:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line):
                    offenders.append(f"{relative}:{number}: {line.strip()}")
    assert offenders == [], "read options through rolls.rules.option"


def test_failed_attempts_count_only_tasks_of_the_retry_systems():
    failure, success = {"outcome": "failure"}, {"outcome": "success"}
    assert failed_attempt("cofd", "climb", "c1", failure) is True
    assert failed_attempt("cofd", "climb", "c1", {"outcome": "dramatic_failure"}) is True
    assert failed_attempt("storyteller", "climb", "c1", {"outcome": "botch"}) is True
    assert failed_attempt("storyteller", "climb", "c1", success) is False
    assert failed_attempt("storyteller", "climb", "c1", {"outcome": "impossible"}) is None
    assert failed_attempt("cofd", "", "c1", failure) is None
    assert failed_attempt("cofd", "climb", None, failure) is None
    assert failed_attempt("age", "climb", "c1", failure) is None


def test_a_logged_decision_is_what_the_legacy_rule_decides_from_the_payload(play):  # noqa: F811
    for system in ("storyteller", "cofd", "age"):
        campaign = play(system, name=f"Attempts {system}")
        for event in campaign.events.filter(type="check.rolled"):
            payload = dict(event.payload)
            recorded = payload.pop("failed_attempt")
            assert recorded_failed_attempt(payload) == recorded
            assert recorded_failed_attempt(event.payload) == recorded
