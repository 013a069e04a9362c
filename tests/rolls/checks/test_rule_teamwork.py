"""Teamwork helpers (RULES 3.7; item 9 of #12): other characters' rolls of this session, visible
to whoever names them (or named by the GM), never the primary's own, each used once."""

from __future__ import annotations

from campaign import services
from rolls.models import RuleUse
from tests.rolls.checks.conftest import first_roll
from tests.rolls.checks.rulebook import refused_roll

PRIMARY = {"traits": ["Wits", "Occult"]}  # 5 dice


def test_a_characters_own_roll_is_not_its_helper(table):
    t = table("cofd")
    own = t.roll("alice", traits=["Wits"], faces=[8, 9, 2])
    refused_roll(t, "alice", 400, "helpers", helpers=[own["seq"]], faces=[2] * 7, **PRIMARY)


def test_a_hidden_roll_of_another_player_cannot_be_named_by_a_player(table):
    t = table("cofd")
    for visibility in ("private", "blind"):
        hidden = t.roll("boris", traits=["Wits"], visibility=visibility, faces=[8, 9, 2])
        refused_roll(t, "alice", 403, "helpers", helpers=[hidden["seq"]], faces=[2] * 7, **PRIMARY)
        assert not RuleUse.objects.filter(rule="helper", check_seq=hidden["seq"]).exists()
    alice = str(t.characters["alice"].pk)
    by_gm = t.roll("gm", character=alice, helpers=[hidden["seq"]], faces=[2] * 7, **PRIMARY)
    assert first_roll(by_gm)["check"]["pool"] == 7, "the GM may name a hidden helper"


def test_helpers_are_of_this_session_and_used_once(table, users):
    t = table("cofd")
    old = t.roll("boris", traits=["Wits"], faces=[8, 9, 2])
    services.end_session(campaign=t.campaign, actor=users["gm"])
    services.start_session(campaign=t.campaign, actor=users["gm"])
    refused_roll(t, "alice", 400, "helpers", helpers=[old["seq"]], faces=[2] * 7, **PRIMARY)
    fresh = t.roll("boris", traits=["Wits"], faces=[8, 9, 2])
    refused_roll(
        t, "alice", 400, "helpers", helpers=[fresh["seq"], fresh["seq"]], faces=[2] * 7, **PRIMARY
    )
    used = t.roll("alice", helpers=[fresh["seq"]], faces=[2] * 7, **PRIMARY)
    assert first_roll(used)["rules"]["teamwork_bonus"] == 2
    refused_roll(t, "alice", 409, "helpers", helpers=[fresh["seq"]], faces=[2] * 7, **PRIMARY)
    refused_roll(t, "alice", 404, "helpers", helpers=[9999], faces=[2] * 7, **PRIMARY)


def test_a_roll_that_used_helpers_is_not_itself_a_helper(table):
    t = table("cofd")
    helper = t.roll("boris", traits=["Wits"], faces=[8, 9, 2])
    primary = t.roll("alice", helpers=[helper["seq"]], faces=[2] * 7, **PRIMARY)
    boris = {"traits": ["Wits", "Occult"], "character": str(t.characters["boris"].pk)}
    refused_roll(t, "boris", 400, "helpers", helpers=[primary["seq"]], faces=[2] * 5, **boris)
