"""Storyteller free botch (RULES 2.7, A.2 storyteller.free_botch), items 1, 2 and 4 of #12."""

from __future__ import annotations

import random

import pytest

from campaign import services
from campaign.models import Session, SessionSecret
from rolls.models import Check
from rolls.systems import KeyedDice, roll, roll_key
from tests.rolls.checks.conftest import first_roll
from tests.rolls.checks.rulebook import character_state, set_options

BOTCH = [1, 3, 5]  # B6: S=0, O=1
FAIL = [2, 3, 4]
WIN = [7, 8, 2]


def test_two_botches_in_one_multiple_action_declaration_use_one_free_botch(table):
    t = table("storyteller", free_botch="per_character")
    check = t.roll("alice", actions=[{"pool": 5}, {"pool": 5}], faces=[[1, 2, 3], [1, 2]])
    rolls = check["data"]["rolls"]
    assert [r["result"]["outcome"] for r in rolls] == ["failure", "botch"]
    assert [r["result"]["free_botch_consumed"] for r in rolls] == [True, False]
    assert character_state(t, "alice")["free_botch_used"] is True
    assert t.roll("alice", pool=3, faces=BOTCH)["outcome"] == "botch", "none left this session"
    assert t.roll("boris", pool=3, faces=BOTCH)["outcome"] == "failure"


def test_multiple_actions_per_table_and_off(table):
    t = table("storyteller", free_botch="per_table")
    check = t.roll("alice", actions=[{"pool": 5}, {"pool": 5}], faces=[[1, 2, 3], [1, 2]])
    assert [r["result"]["outcome"] for r in check["data"]["rolls"]] == ["failure", "botch"]
    assert t.roll("boris", pool=3, faces=BOTCH)["outcome"] == "botch", "the table's is gone"
    off = table("storyteller", free_botch="off")
    check = off.roll("alice", actions=[{"pool": 5}, {"pool": 5}], faces=[[1, 2, 3], [1, 2]])
    assert [r["result"]["outcome"] for r in check["data"]["rolls"]] == ["botch", "botch"]


def test_the_resisting_side_gets_its_own_free_botch(table):
    t = table("storyteller")
    alice, boris = (str(t.characters[n].pk) for n in ("alice", "boris"))
    check = t.roll(
        "gm", character=alice, pool=3, against={"character": boris, "pool": 3},
        faces=[[1, 2, 3], [1, 4, 5]],
    )  # fmt: skip
    a, b = check["data"]["rolls"]
    assert (a["result"]["outcome"], b["result"]["outcome"]) == ("failure", "failure")
    assert a["result"]["free_botch_consumed"] and b["result"]["free_botch_consumed"]
    assert character_state(t, "alice")["free_botch_used"]
    assert character_state(t, "boris")["free_botch_used"]
    again = t.roll(
        "gm", character=boris, pool=3, against={"character": alice, "pool": 3},
        faces=[[1, 2, 3], [1, 4, 5]],
    )  # fmt: skip
    assert [r["result"]["outcome"] for r in again["data"]["rolls"]] == ["botch", "botch"]


def test_an_unnamed_npc_has_no_free_botch(table):
    t = table("storyteller")
    alice = str(t.characters["alice"].pk)
    check = t.roll("gm", character=alice, pool=3, against={"pool": 3}, faces=[[7, 8, 9], BOTCH])
    assert check["data"]["rolls"][1]["result"]["outcome"] == "botch"
    assert t.get("gm", "state/")["table_free_botch_used"] is False


def test_a_table_free_botch_used_counts_for_its_character_after_the_gm_switches_scope(table):
    t = table("storyteller", free_botch="per_table")
    assert t.roll("alice", pool=3, faces=BOTCH)["outcome"] == "failure"
    set_options(t, free_botch="per_character")
    assert t.roll("alice", pool=3, faces=BOTCH)["outcome"] == "botch", "alice used hers"
    assert t.roll("boris", pool=3, faces=BOTCH)["outcome"] == "failure", "boris has his"
    set_options(t, free_botch="per_table")
    assert t.roll("boris", pool=3, faces=BOTCH)["outcome"] == "botch", "the table's is used"
    state = t.get("gm", "state/")
    assert state["table_free_botch_used"] is True
    assert [c["free_botch_used"] for c in state["characters"]] == [True, True]


def test_a_character_free_botch_used_spends_the_tables_after_a_switch(table):
    t = table("storyteller", free_botch="per_character")
    assert t.roll("boris", pool=3, faces=BOTCH)["outcome"] == "failure"
    set_options(t, free_botch="per_table")
    assert t.roll("alice", pool=3, faces=BOTCH)["outcome"] == "botch", "one this session already"


class Model:
    """What RULES 2.7 and the README's scoping rule predict, kept apart from the server."""

    def __init__(self) -> None:
        self.used: set[str] = set()  # characters who consumed a free botch this session

    def new_session(self) -> None:
        self.used = set()

    def botch_becomes_failure(self, who: str, mode: str) -> bool:
        free = {
            "per_character": who not in self.used,
            "per_table": not self.used,
            "off": False,
        }[mode]
        if free:
            self.used.add(who)
        return free


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_seeded_sequences_across_sessions_and_scope_switches(table, users, seed):
    rng = random.Random(seed)
    t = table("storyteller", free_botch="per_character")
    model = Model()
    mode = "per_character"
    for step in range(40):
        action = rng.random()
        if action < 0.08:
            services.end_session(campaign=t.campaign, actor=users["gm"])
            services.start_session(campaign=t.campaign, actor=users["gm"])
            model.new_session()
            continue
        if action < 0.16:
            mode = rng.choice(["per_character", "per_table", "off"])
            set_options(t, free_botch=mode)
            continue
        who = rng.choice(["alice", "boris"])
        faces = rng.choice([BOTCH, FAIL, WIN])
        outcome = t.roll(who, pool=3, faces=faces)["outcome"]
        if faces is BOTCH:
            expected = "failure" if model.botch_becomes_failure(who, mode) else "botch"
        else:
            expected = "failure" if faces is FAIL else "success"
        assert outcome == expected, (step, who, mode)
        state = t.get("gm", "state/")
        used = {
            c["name"].split("'")[0].lower() for c in state["characters"] if c["free_botch_used"]
        }
        assert used == model.used, step
        assert state["table_free_botch_used"] == bool(model.used)


def test_first_roll_of_the_declaration_is_the_one_that_consumes(table):
    t = table("storyteller")
    check = t.roll("alice", actions=[{"pool": 5}, {"pool": 5}], faces=[[7, 8, 9], [1, 2]])
    assert [r["result"]["outcome"] for r in check["data"]["rolls"]] == ["success", "failure"]
    assert first_roll(check)["result"]["free_botch_consumed"] is False


def _double_botch(key: bytes, campaign: int, seq: int) -> bool:
    dice = KeyedDice(key, campaign, seq)
    first = roll("storyteller", {"pool": 3, "difficulty": 10}, dice)[1]
    second = roll("storyteller", {"pool": 2, "difficulty": 10}, dice)[1]
    return first["outcome"] == second["outcome"] == "botch"


def test_server_dice_that_botch_twice_in_one_declaration_are_recorded_not_stuck(table):
    """With server dice a refused append would draw the same faces again at the same seq: the
    declaration that botches twice must be recorded, and the campaign must keep rolling."""
    t = table("storyteller", manual=False)
    session = Session.open_in(t.campaign)
    seed = bytes(SessionSecret.objects.get(session_id=session.pk).seed)
    for _ in range(400):  # filler rolls move seq on until the next one botches twice
        t.campaign.refresh_from_db()
        index = Check.objects.filter(campaign=t.campaign, session_id=session.pk).count()
        if _double_botch(roll_key(seed, index), t.campaign.pk, t.campaign.head_seq + 1):
            break
        t.roll("boris", pool=1)
    else:
        pytest.fail("no double botch within 400 seqs")
    declaration = {"actions": [{"pool": 5}, {"pool": 5}], "difficulty": 10}
    check = t.roll("alice", **declaration)
    assert [r["result"]["outcome"] for r in check["data"]["rolls"]] == ["failure", "botch"]
    assert t.roll("alice", pool=1)["seq"] == check["seq"] + 1
