"""The full proof in parallel, per session: the same report as one pass, problems included."""

from __future__ import annotations

import pytest

from campaign import services
from rolls.models import VerificationCheckpoint
from rolls.trust import stored_log
from rolls.trust.stored_log import verify_campaigns
from tests.rolls.trust.conftest import TRAITS, roll
from tests.rolls.trust.test_trust_tamper_db import face, outcome

pytestmark = pytest.mark.django_db(transaction=True)  # forked workers see committed rows only


def _long_table(play, users, system: str, sessions: int = 4):
    campaign = play(system)  # every kind of roll, one session, closed
    hero = campaign.characters.get(name="Hero")
    for _ in range(sessions):
        services.start_session(campaign=campaign, actor=users["gm"])
        for _ in range(3):
            roll(campaign, users["alice"], character=str(hero.pk), **TRAITS[system])
        services.end_session(campaign=campaign, actor=users["gm"])
    campaign.refresh_from_db()
    return campaign


def _report(**options):
    report = verify_campaigns(fresh=True, **options)
    state = VerificationCheckpoint.objects.get().state
    return report.lines, [str(p) for p in report.problems], state


@pytest.mark.parametrize("system", ["cofd", "age"])
def test_the_parallel_proof_reports_what_one_pass_does(play, users, monkeypatch, system):
    _long_table(play, users, system)
    one = _report(workers=1)
    monkeypatch.setattr(stored_log, "PARALLEL_MIN", 1)
    monkeypatch.setattr(stored_log, "SEGMENT_MIN", 1)
    cut = []
    segments = stored_log._session_segments
    monkeypatch.setattr(
        stored_log, "_session_segments", lambda *a: cut.append(segments(*a)) or cut[-1]
    )
    two = _report(workers=2)
    assert len(cut[0]) > 2, "it was cut per session"
    assert two == one
    assert not one[1]


@pytest.mark.parametrize("tamper", [face, outcome], ids=lambda t: t.__name__)
def test_the_parallel_proof_names_a_tampered_event_as_one_pass_does(
    play, users, monkeypatch, tamper
):
    campaign = _long_table(play, users, "cofd")
    seq, event_type, expected = tamper(campaign)
    one = _report(workers=1)
    monkeypatch.setattr(stored_log, "PARALLEL_MIN", 1)
    monkeypatch.setattr(stored_log, "SEGMENT_MIN", 1)
    two = _report(workers=2)
    assert two == one
    assert any(f"event #{seq} ({event_type})" in p and expected in p for p in two[1])


def test_a_checkpoint_left_by_the_parallel_proof_carries_on(play, users, monkeypatch):
    """The merged state is a verifier's: an open session, its key chain, the next roll."""
    campaign = _long_table(play, users, "cofd", sessions=2)
    services.start_session(campaign=campaign, actor=users["gm"])
    hero = campaign.characters.get(name="Hero")
    roll(campaign, users["alice"], character=str(hero.pk), **TRAITS["cofd"])
    monkeypatch.setattr(stored_log, "PARALLEL_MIN", 1)
    monkeypatch.setattr(stored_log, "SEGMENT_MIN", 1)
    assert not verify_campaigns(fresh=True, workers=2).problems
    roll(campaign, users["alice"], character=str(hero.pk), **TRAITS["cofd"])
    carried = verify_campaigns()
    assert not carried.problems
    assert carried.lines == verify_campaigns(fresh=True, workers=1).lines
