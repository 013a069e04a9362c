"""Round trip: play every system, close the session, export, verify with the standalone command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from rolls.systems import SYSTEM_IDS
from rolls.trust.export import export_campaign
from rolls.trust.stored_log import verify_campaigns
from rolls.trust.verify import check_export, main

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("system", SYSTEM_IDS)
def test_a_played_session_exports_and_verifies_in_every_system(play, system, capsys, tmp_path):
    campaign = play(system)
    document = export_campaign(campaign)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(document))

    assert main([str(path)]) == 0
    out = capsys.readouterr().out
    report = check_export(document)
    session = report.sessions[0]
    assert session.ok and session.server_rolls >= 5
    assert session.proven == session.server_rolls, "every server roll re-rolls from its key"
    assert session.manual_rolls == 1, "the physical-dice roll is counted apart, not proven"
    assert "OK" in out and "1 manual roll(s), not covered by the keys" in out
    assert (
        f"{session.proven}/{session.server_rolls} server roll(s) follow from keys committed "
        "before them" in out
    )


def test_the_standalone_verifier_needs_only_the_standard_library_and_rolls(play, tmp_path):
    """A player's machine: a copy of rolls/ and the log's chain and vocabulary (eventlog/chain.py,
    eventlog/event_types.py), no Django, no site-packages, and the export."""
    campaign = play("cofd")
    (tmp_path / "export.json").write_text(json.dumps(export_campaign(campaign)))
    kit = tmp_path / "kit"
    for name in (
        "rolls/__init__.py",
        "rolls/rules.py",
        "rolls/trust/__init__.py",
        "rolls/trust/verify.py",
        "eventlog/__init__.py",
        "eventlog/chain.py",
        "eventlog/event_types.py",
    ):
        (kit / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, kit / name)
    shutil.copytree(ROOT / "rolls" / "systems", kit / "rolls" / "systems")
    run = subprocess.run(
        [sys.executable, "-S", "-m", "rolls.trust.verify", str(tmp_path / "export.json")],
        cwd=kit,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "OK" in run.stdout and "1 closed session(s) proven" in run.stdout


def test_verify_log_runs_the_same_checks_on_the_database(play, capsys):
    play("age")
    play("storyteller", name="Second table")
    report = verify_campaigns()
    assert not report.problems
    assert [r.sessions_proven for r in report.campaigns] == [1, 1]
    call_command("verify_log")
    out = capsys.readouterr().out
    assert "OK:" in out and "server roll(s) follow from keys committed before them" in out


def test_an_open_session_is_proven_as_it_goes_in_every_copy(play, users):
    """Each roll discloses its own key: nobody waits for the session's end, and the seed that
    would give the hidden rolls' keys is never needed."""
    campaign = play("nice_damnit", end=False)
    report = verify_campaigns()
    assert not report.problems
    session = report.campaigns[0].sessions[0]
    assert session.ended_seq is None and session.proven == session.server_rolls > 0
    player = campaign.memberships.get(user=users["boris"])
    export = check_export(export_campaign(campaign, membership=player))
    assert export.ok and export.sessions[0].hidden_rolls == 2  # alice's private, the GM's blind
    assert export.sessions[0].proven == export.sessions[0].server_rolls > 0
