"""Teamwork helpers (RULES 3.7; item 9 of #12): other characters' rolls of this session, visible
to whoever names them (or named by the GM), never the primary's own, each used once."""

from __future__ import annotations

from campaign import services
from rolls.models import RuleUse
from tests.rolls.checks.conftest import first_roll
from tests.rolls.checks.rulebook import refused, refused_roll

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
    # The GM may name a hidden helper, for a roll as hidden as it (tests/api/test_leaks.py).
    by_gm = t.roll(
        "gm",
        character=alice,
        helpers=[hidden["seq"]],
        faces=[2] * 7,
        **{**PRIMARY, "visibility": "blind"},
    )
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


def test_a_helping_character_helps_once(table):
    """RULES 3.7: each helper rolls once and adds its successes; two rolls of one character
    named as helpers are refused (the GM's unnamed NPC rolls may be many)."""
    t = table("cofd")
    first = t.roll("boris", traits=["Wits"], faces=[8, 9, 8])
    second = t.roll("boris", traits=["Wits"], faces=[8, 9, 8])
    body = refused_roll(
        t, "alice", 400, "helpers", helpers=[first["seq"], second["seq"]], faces=[2] * 11, **PRIMARY
    )
    assert "one roll per helping character" in str(body)
    npcs = [t.roll("gm", traits=[], pool=2, faces=[8, 9]) for _ in range(2)]
    alice = str(t.characters["alice"].pk)
    helped = t.roll(
        "gm", character=alice, helpers=[n["seq"] for n in npcs], faces=[2] * 9, **PRIMARY
    )
    assert first_roll(helped)["rules"]["teamwork_bonus"] == 4


def test_a_roll_used_as_a_helper_cannot_then_become_a_dramatic_failure(table):
    """RULES 3.7: a helper's dramatic failure costs the primary 4 dice. Once the primary has
    rolled with it, the helper's failure can no longer be turned (a Beat the team never paid
    for): not offered, and refused."""
    t = table("cofd")
    helper = t.roll("boris", traits=["Wits"], faces=[2, 3, 4])  # a failure: 0 successes
    path = f"checks/{helper['seq']}/dramatic-failure/"
    assert [o["kind"] for o in helper["follow_ups"]] == ["dramatic_failure"]
    t.roll("alice", helpers=[helper["seq"]], faces=[2] * 5, **PRIMARY)
    assert t.get("boris", f"checks/{helper['seq']}/")["follow_ups"] == []
    assert str(helper["seq"]) not in t.get("boris", "state/")["follow_ups"]
    body = refused(t, "boris", path, {}, 409, "check")
    assert "helped another roll" in str(body)
    assert t.character("boris").resources.get("beats", 0) == 0
