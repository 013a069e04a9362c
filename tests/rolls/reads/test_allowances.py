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
