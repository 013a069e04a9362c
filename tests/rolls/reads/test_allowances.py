"""What GET …/state/ tells the pages they may do now (rolls.reads.allowances)."""

from __future__ import annotations

import pytest

from campaign import services

pytestmark = pytest.mark.django_db


def test_may_roll_says_whether_this_member_may_roll_now(table, users):
    t = table("cofd")
    said = {who: t.get(who, "state/")["may_roll"] for who in ("gm", "alice", "olga")}
    assert said == {"gm": True, "alice": True, "olga": False}  # observers watch
    services.end_session(campaign=t.campaign, actor=users["gm"])
    assert [t.get(who, "state/")["may_roll"] for who in ("gm", "alice")] == [False, False]
    refused = t.roll("alice", traits=["Wits"], faces=[8, 2], expect=409)  # what it follows
    assert list(refused) == ["session", "code"]


@pytest.mark.parametrize(
    ("system", "failure"),
    [
        ("cofd", {"traits": ["Wits"], "faces": [2, 3, 4]}),  # offers a dramatic failure
        ("age", {"traits": ["Dexterity"], "target": 15, "faces": [1, 2, 3]}),  # offers Fortune
    ],
)
def test_the_rule_state_reads_each_open_period_once(table, system, failure):
    """GET state/ (every page after every event) reads the open session, chapter and scene once,
    and the follow-up offers it lists take them from that read (they read the session again,
    in the feed's window and in the rules, twice more per request)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from campaign.models import Chapter, Scene, Session

    t = table(system)
    seq = t.roll("alice", **failure)["seq"]
    with CaptureQueriesContext(connection) as queries:
        state = t.get("alice", "state/")
    assert state["follow_ups"][str(seq)], "an offer was read"
    for model in (Session, Chapter, Scene):
        reads = [q["sql"] for q in queries if model._meta.db_table in q["sql"]]
        assert len(reads) == 1, (model.__name__, reads)
