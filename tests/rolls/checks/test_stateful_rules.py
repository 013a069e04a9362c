"""Every stateful rule, end to end through the REST API (SQLite here; PostgreSQL in CI)."""

from __future__ import annotations

import pytest

from campaign import services
from rolls.systems import nice_damnit
from tests.rolls.checks.conftest import first_roll
from tests.rolls.checks.rulebook import refused, set_options

# --- Storyteller ------------------------------------------------------------------------------


def test_free_botch_turns_the_first_botch_of_each_character_per_session_into_a_failure(
    table, users
):
    t = table("storyteller")
    botch = {"traits": ["Mental"], "pool": 1, "faces": [1, 3, 5]}  # B6: S=0, O=1
    first = t.roll("alice", **botch)
    assert first["outcome"] == "failure"
    assert first_roll(first)["result"]["free_botch_consumed"] is True
    assert t.roll("alice", **botch)["outcome"] == "botch", "the second botch stays a botch"
    assert t.roll("boris", **botch)["outcome"] == "failure", "boris has a free botch of his own"
    state = t.get("gm", "state/")
    assert all(c["free_botch_used"] for c in state["characters"])
    services.end_session(campaign=t.campaign, actor=users["gm"])
    services.start_session(campaign=t.campaign, actor=users["gm"])
    assert t.roll("alice", **botch)["outcome"] == "failure", "a new session gives a new one"


def test_free_botch_per_table_and_off(table):
    t = table("storyteller", free_botch="per_table")
    botch = {"traits": ["Mental"], "pool": 1, "faces": [1, 3, 5]}
    assert t.roll("alice", **botch)["outcome"] == "failure"
    assert t.roll("boris", **botch)["outcome"] == "botch", "one free botch for the whole table"
    assert t.get("alice", "state/")["table_free_botch_used"] is True
    off = table("storyteller", free_botch="off")
    assert off.roll("alice", **botch)["outcome"] == "botch"


@pytest.mark.parametrize(
    ("mode", "difficulties"), [("seed", [6, 7, 9, 10]), ("linear", [6, 7, 8, 9]), ("off", [6] * 4)]
)
def test_retry_difficulty_escalates_per_task_until_success(table, mode, difficulties):
    t = table("storyteller", retry_escalation=mode)
    fail = {"traits": ["Physical", "Lockpicking"], "task": "the vault", "faces": [2] * 7}
    seen = []
    for _ in range(4):
        check = t.roll("alice", stressful=True, **fail)
        seen.append(first_roll(check)["check"]["difficulty"])
        assert first_roll(check)["rules"]["attempt"] == len(seen)
    assert seen == difficulties  # B10
    odds = t.post(
        "alice",
        "checks/odds/",
        {"character": str(t.characters["alice"].pk), "traits": ["Physical"], "task": "the vault"},
        200,
    )
    assert odds["rules"]["attempt"] == 5
    success = t.roll("alice", stressful=True, **{**fail, "faces": [10] * 7})
    assert success["outcome"] == "success"
    again = t.roll("alice", stressful=True, **fail)
    assert first_roll(again)["check"]["difficulty"] == 6, "success resets the task"
    other_task = t.roll("alice", stressful=True, **{**fail, "task": "the window"})
    assert first_roll(other_task)["check"]["difficulty"] == 6


def test_gm_resets_a_task_and_marks_checks_as_not_escalating(table):
    t = table("storyteller")
    fail = {"traits": ["Physical", "Lockpicking"], "task": "lock", "faces": [2] * 7}
    t.roll("alice", **fail)
    assert first_roll(t.roll("alice", **fail))["check"]["difficulty"] == 7
    assert t.get("gm", "state/")["retries"] == [
        {"character": str(t.characters["alice"].pk), "task": "lock", "failures": 2}
    ]
    body = {"character": str(t.characters["alice"].pk), "task": "lock"}
    t.post("alice", "tasks/reset/", body, expect=403)
    t.post("gm", "tasks/reset/", body, expect=204)
    assert first_roll(t.roll("alice", **fail))["check"]["difficulty"] == 6
    t.roll("alice", expect=403, not_escalating=True, **fail)
    exempt = t.roll("gm", character=str(t.characters["alice"].pk), not_escalating=True, **fail)
    assert first_roll(exempt)["check"]["difficulty"] == 6
    assert first_roll(exempt)["rules"]["not_escalating"] is True


def test_automatic_success_needs_pool_at_difficulty_and_no_stress(table):
    t = table("storyteller")
    veronica = {"traits": ["Physical", "Lockpicking"], "pool": -1, "automatic": True, "faces": []}
    check = t.roll("alice", **veronica)  # 3 + 4 - 1 = 6 dice at difficulty 6 (B2)
    assert (check["outcome"], first_roll(check)["result"]["successes"]) == ("success", 1)
    assert first_roll(check)["faces"] == []
    error = t.roll("alice", expect=400, **{**veronica, "pool": -2})  # B12: 5 < 6
    assert "roll instead" in str(error)
    t.roll("alice", expect=400, stressful=True, **veronica)


def test_multiple_actions_split_the_pools_as_in_the_hall_example(table):
    t = table("storyteller")
    check = t.roll(
        "boris",
        actions=[
            {"traits": ["Physical", "Brawl"], "label": "punch"},
            {"traits": ["Physical", "Dodge"], "label": "dodge"},
            {"traits": ["Physical", "Dodge"], "label": "dodge again"},
        ],
        faces=[[6, 6, 6, 6], [2, 2], [3]],
    )
    assert check["kind"] == "multiple"
    rolls = check["data"]["rolls"]
    assert [r["check"]["pool"] for r in rolls] == [4, 2, 1]  # B3
    assert [r["result"]["outcome"] for r in rolls] == ["success", "failure", "failure"]
    assert [r["label"] for r in rolls] == ["punch", "dodge", "dodge again"]


def test_resisted_action_between_two_characters(table):
    t = table("storyteller")
    check = t.roll(
        "gm",
        character=str(t.characters["alice"].pk),
        traits=["Physical", "Dodge"],
        pool=-1,
        against={"character": str(t.characters["boris"].pk), "traits": ["Physical"], "pool": 1},
        faces=[[6, 7, 8, 9, 2], [6, 6, 7, 3]],  # B11
    )
    assert check["kind"] == "resisted"
    assert check["data"]["comparison"]["winner"] == "a"
    assert check["data"]["comparison"]["net_successes"] == 1
    t.roll("alice", expect=403, traits=["Physical"], against={"traits": ["Physical"]}, faces=[])


# --- Chronicles of Darkness -------------------------------------------------------------------


def test_intentional_dramatic_failure_once_per_chapter_for_a_beat(table, users):
    t = table("cofd")
    failure = {"traits": ["Wits", "Occult"], "faces": [2, 3, 4, 5, 6]}
    check = t.roll("alice", **failure)
    assert check["outcome"] == "failure"
    t.post("boris", f"checks/{check['seq']}/dramatic-failure/", expect=403)
    taken = t.post("alice", f"checks/{check['seq']}/dramatic-failure/", expect=200)
    assert taken["outcome"] == "dramatic_failure"
    assert first_roll(taken)["result"]["intentional"] is True
    assert t.character("alice").resources["beats"] == 1
    again = t.roll("alice", **failure)
    error = t.post("alice", f"checks/{again['seq']}/dramatic-failure/", expect=409)
    assert "already taken an intentional dramatic failure this chapter" in str(error)
    assert t.character("alice").resources["beats"] == 1
    state = t.get("alice", "state/")
    mine = next(c for c in state["characters"] if c["id"] == str(t.characters["alice"].pk))
    assert mine["dramatic_failure_used"] is True
    # Boris's allowance is his own; a success cannot be turned; a new chapter renews it.
    other = t.roll("boris", **failure)
    t.post("boris", f"checks/{other['seq']}/dramatic-failure/", expect=200)
    success = t.roll("alice", **{**failure, "faces": [8, 3, 4, 5, 6]})
    t.post("alice", f"checks/{success['seq']}/dramatic-failure/", expect=409)
    services.end_chapter(campaign=t.campaign, actor=users["gm"])
    services.start_chapter(campaign=t.campaign, actor=users["gm"])
    t.post("alice", f"checks/{again['seq']}/dramatic-failure/", expect=409)  # its chapter is over
    fresh = t.roll("alice", **failure)
    t.post("alice", f"checks/{fresh['seq']}/dramatic-failure/", expect=200)
    assert t.character("alice").resources["beats"] == 2


def test_intentional_dramatic_failure_per_scene_unlimited_and_off(table, users):
    scenes = table("cofd", intentional_dramatic_failure="per_scene")
    failure = {"traits": ["Wits"], "faces": [2, 3, 4]}
    no_scene = scenes.roll("alice", **failure)
    scenes.post("alice", f"checks/{no_scene['seq']}/dramatic-failure/", expect=409)
    services.start_scene(campaign=scenes.campaign, actor=users["gm"])
    first = scenes.roll("alice", **failure)
    scenes.post("alice", f"checks/{first['seq']}/dramatic-failure/", expect=200)
    second = scenes.roll("alice", **failure)
    scenes.post("alice", f"checks/{second['seq']}/dramatic-failure/", expect=409)
    services.end_scene(campaign=scenes.campaign, actor=users["gm"])
    services.start_scene(campaign=scenes.campaign, actor=users["gm"])
    third = scenes.roll("alice", **failure)
    scenes.post("alice", f"checks/{third['seq']}/dramatic-failure/", expect=200)

    unlimited = table("cofd", intentional_dramatic_failure="unlimited")
    for _ in range(3):
        check = unlimited.roll("alice", **failure)
        unlimited.post("alice", f"checks/{check['seq']}/dramatic-failure/", expect=200)
    unlimited.post("alice", f"checks/{check['seq']}/dramatic-failure/", expect=409)  # not twice
    assert unlimited.character("alice").resources["beats"] == 3

    off = table("cofd", intentional_dramatic_failure="off")
    check = off.roll("alice", **failure)
    off.post("alice", f"checks/{check['seq']}/dramatic-failure/", expect=409)


def test_natural_dramatic_failure_earns_a_beat_only_with_the_option(table):
    chance = {"traits": ["Wits"], "pool": -3, "faces": [1]}  # C7
    plain = table("cofd")
    assert plain.roll("alice", **chance)["outcome"] == "dramatic_failure"
    assert plain.character("alice").resources["beats"] == 0
    generous = table("cofd", beat_on_dramatic_failure=True)
    generous.roll("alice", **chance)
    assert generous.character("alice").resources["beats"] == 1


def test_retry_penalty_under_pressure_grows_with_each_attempt(table):
    t = table("cofd")
    retry = {"traits": ["Wits", "Occult"], "task": "the ritual", "under_pressure": True}
    pools = []
    for faces in ([2, 3, 4, 5, 6], [2, 3, 4, 5], [2, 3, 4]):
        check = t.roll("alice", faces=faces, **retry)
        pools.append(first_roll(check)["check"]["pool"])
    assert pools == [5, 4, 3]  # C16
    calm = t.roll("alice", faces=[2, 3, 4, 5, 6], **{**retry, "under_pressure": False})
    assert first_roll(calm)["check"]["pool"] == 5
    extended = t.roll("alice", faces=[2, 3, 4, 5, 6], extended=True, **retry)
    assert first_roll(extended)["check"]["pool"] == 5, "never for extended actions"
    off = table("cofd", retry_penalty=False)
    off.roll("alice", faces=[2, 3, 4, 5, 6], **retry)
    assert first_roll(off.roll("alice", faces=[2, 3, 4, 5, 6], **retry))["check"]["pool"] == 5


def test_teamwork_helpers_add_their_successes_and_cost_four_per_dramatic_failure(table):
    t = table("cofd")
    helper = t.roll("boris", traits=["Wits"], faces=[8, 9, 1])  # C14: 2 successes
    clumsy = t.roll("gm", traits=[], pool=-1, faces=[1])  # a chance die showing 1
    primary = t.roll(
        "alice", traits=["Wits", "Occult"], helpers=[helper["seq"], clumsy["seq"]], faces=[2, 3, 4]
    )
    roll = first_roll(primary)
    assert roll["check"]["pool"] == 5 + 2 - 4
    assert roll["rules"]["teamwork_bonus"] == -2
    t.roll("alice", expect=409, traits=["Wits"], helpers=[helper["seq"]], faces=[2, 3, 4, 5])


def test_modifier_groups_are_capped_at_five_with_bonuses_first(table):
    t = table("cofd")
    check = t.roll(
        "alice",
        traits=["Strength", "Brawl"],  # C15-like: base 5
        modifiers=[
            {"group": "equipment", "value": 4},
            {"group": "equipment", "value": 3},
            {"group": "wounds", "value": -1},
        ],
        faces=[2] * 9,
    )
    assert first_roll(check)["check"]["pool"] == 5 + 5 - 1
    wide = table("cofd", modifier_cap=10)
    check = wide.roll(
        "alice",
        traits=["Strength", "Brawl"],
        modifiers=[{"group": "equipment", "value": 7}],
        faces=[2] * 12,
    )
    assert first_roll(check)["check"]["pool"] == 12


def test_specialty_adds_a_die_only_for_a_rolled_skill(table):
    t = table("cofd")
    check = t.roll("alice", traits=["Wits", "Occult"], specialty="Ghosts", faces=[2] * 6)
    assert first_roll(check)["check"]["pool"] == 6
    t.roll("alice", expect=400, traits=["Wits", "Brawl"], specialty="Ghosts", faces=[2] * 6)


# --- AGE (The Expanse) ------------------------------------------------------------------------


def test_fortune_sets_one_die_after_the_roll_and_is_paid_from_the_balance(table):
    t = table("age")
    check = t.roll("alice", traits=["Dexterity"], pool=-3, target=10, faces=[1, 3, 3])  # D2
    assert check["outcome"] == "failure"
    t.post("alice", f"checks/{check['seq']}/fortune/", {"die": 2, "value": 4}, expect=409)  # D9
    t.post("alice", f"checks/{check['seq']}/fortune/", {"die": 3, "value": 1}, expect=400)
    t.post("boris", f"checks/{check['seq']}/fortune/", {"die": 0, "value": 4}, expect=403)
    assert t.character("alice").resources["fortune"] == 6
    assert check["dice_marks"][0][0] == [{"face": 1, "sides": 6, "marks": []}]
    changed = t.post("alice", f"checks/{check['seq']}/fortune/", {"die": 0, "value": 4}, 200)
    result = first_roll(changed)["result"]
    assert (changed["outcome"], result["total"], result["stunt_points"]) == ("success", 10, 3)
    # The die Fortune set is drawn as set, in the answer and when read again: not as rolled.
    fortune = [
        {"face": 1, "sides": 6, "marks": ["rerolled"]},
        {"face": 4, "sides": 6, "marks": ["fortune"]},
    ]
    assert changed["dice_marks"][0][0] == fortune
    assert t.get("boris", f"checks/{check['seq']}/")["dice_marks"][0][0] == fortune
    assert t.character("alice").resources["fortune"] == 2
    t.post("alice", f"checks/{check['seq']}/fortune/", {"die": 1, "value": 1}, expect=409)
    off = table("age", fortune_dice=False)
    other = off.roll("alice", traits=["Dexterity"], target=10, faces=[1, 3, 3])
    off.post("alice", f"checks/{other['seq']}/fortune/", {"die": 0, "value": 4}, expect=409)


def test_age_focus_and_opposed_tests(table):
    t = table("age")
    check = t.roll("alice", traits=["Dexterity"], focus="Acrobatics", target=11, faces=[3, 3, 4])
    result = first_roll(check)["result"]  # D1: 10 + 3 + 2 = 15, doubles → 4 SP
    assert (result["total"], result["stunt_points"]) == (15, 4)
    t.roll("alice", expect=400, traits=["Fighting"], focus="Acrobatics", faces=[1, 1, 1])
    opposed = t.roll(
        "gm",
        character=str(t.characters["alice"].pk),
        traits=["Dexterity"],
        pool=-1,
        against={"character": str(t.characters["boris"].pk), "traits": ["Fighting"]},
        faces=[[4, 3, 5], [5, 4, 3]],  # D8: 14 with drama 5 against 14 with drama 3
    )
    assert opposed["data"]["comparison"]["winner"] == "a"
    assert opposed["data"]["comparison"]["decided_by"] == "drama"


# --- Nice!/Damnit! ----------------------------------------------------------------------------


def test_extra_nice_chips_after_the_roll(table):
    t = table("nice_damnit")
    check = t.roll("alice", traits=["Firearms", "Quick draw"], faces=[4, 4])  # 8 + 2 + 3 = 13
    assert (first_roll(check)["result"]["nice"], first_roll(check)["result"]["damnit"]) == (1, 3)
    taken = t.post("alice", f"checks/{check['seq']}/extra-nice/", {"count": 2}, expect=200)
    assert (first_roll(taken)["result"]["nice"], first_roll(taken)["result"]["damnit"]) == (3, 5)
    t.post("alice", f"checks/{check['seq']}/extra-nice/", {"count": 1}, expect=409)
    bad = t.roll("alice", traits=["Riding"], faces=[1, 2])
    assert bad["outcome"] == "bad"
    t.post("alice", f"checks/{bad['seq']}/extra-nice/", {"count": 1}, expect=409)
    t.post("alice", f"checks/{bad['seq']}/extra-nice/", {"count": 3}, expect=400)
    perk = t.roll("boris", traits=["Riding", "Horseback"], faces=[9, 9])
    assert first_roll(perk)["result"]["total"] == 19, "perk skills add nothing"


def test_more_extra_nice_than_the_roll_allows_is_refused_not_cut(table):
    """RULES 5.3 clamps the extra Nice! to what the band and the caps of 9 allow: asked for more,
    the player is told so (409 naming count) and nothing is taken, where the roll quietly took
    fewer than asked."""
    t = table("nice_damnit")
    check = t.roll("alice", traits=["Firearms", "Quick draw"], faces=[9, 8])  # 17 + 5 = 22
    total = first_roll(check)["result"]["total"]
    assert nice_damnit.extra_nice_allowed(total) == 1, total  # 8 Nice!: one more to the cap
    events = t.events()
    refused = t.post("alice", f"checks/{check['seq']}/extra-nice/", {"count": 2}, expect=409)
    assert "at most 1 extra Nice!" in refused["count"][0]
    assert t.events() == events
    offers = t.get("alice", f"checks/{check['seq']}/")["follow_ups"]
    assert [choice["body"] for choice in offers[0]["choices"]] == [{"count": 1}]
    taken = t.post("alice", f"checks/{check['seq']}/extra-nice/", {"count": 1}, expect=200)
    assert first_roll(taken)["result"]["extra_nice"] == 1


# --- d6 pool ----------------------------------------------------------------------------------


def test_cowboy_john_goes_the_wrong_way(table):
    t = table("d6pool")
    check = t.roll(
        "alice",
        traits=["Reaction", "Shooting"],
        modifiers=[{"value": -6, "label": "tiny target"}],
        faces=[1, 5],
    )
    assert check["outcome"] == "wrong_way"  # A1


def test_adrenaline_dice_only_when_the_gm_marks_a_life_or_death_action(table):
    t = table("d6pool", adrenaline_dice=3)
    t.roll("alice", expect=403, traits=["Strength"], life_or_death=True, faces=[4] * 6)
    check = t.roll(
        "gm",
        character=str(t.characters["alice"].pk),
        traits=["Strength"],
        life_or_death=True,
        faces=[4] * 6,
    )
    assert first_roll(check)["check"]["pool"] == 6
    assert first_roll(check)["rules"]["adrenaline_dice"] == 3


def test_opposed_action_and_contest(table):
    t = table("d6pool")
    alice, boris = str(t.characters["alice"].pk), str(t.characters["boris"].pk)
    opposed = t.roll(
        "gm",
        character=alice,
        traits=["Reaction"],
        against={"character": boris, "traits": ["Strength"], "pool": 2},
        faces=[[4, 5, 2, 3], [4, 2, 1]],  # A12: attacker N=2, defender 5 - 2 = 3 dice
    )
    assert [r["check"]["pool"] for r in opposed["data"]["rolls"]] == [4, 3]
    assert opposed["data"]["comparison"]["outcome"] == "partial_defence"
    contest = t.roll(
        "gm",
        character=alice,
        traits=["Reaction"],
        mode="contest",
        against={"character": boris, "traits": ["Reaction"]},
        faces=[[4, 5, 6, 1], [4, 2, 2, 1]],
    )
    assert contest["kind"] == "contest"
    assert contest["data"]["comparison"]["winner"] == 0
    missed = t.roll(
        "gm",
        character=alice,
        traits=["Reaction"],
        against={"character": boris, "traits": ["Strength"]},
        faces=[[2, 2, 3, 3], []],
    )
    assert missed["data"]["comparison"]["outcome"] == "no_effect"
    assert len(missed["data"]["rolls"]) == 1, "a failed attack needs no defence roll"


# --- calls for a check, visibility, server dice ----------------------------------------------


def test_the_gm_calls_for_a_check_and_the_player_answers_it(table):
    t = table("cofd")
    alice_id = str(t.characters["alice"].pk)
    call = t.post(
        "gm",
        "calls/",
        {
            "characters": [alice_id],
            "request": {
                "traits": ["Wits", "Occult"],
                "visibility": "blind",
                "label": "Notice the draft",
            },
        },
        expect=201,
    )
    assert [c["id"] for c in t.get("alice", "calls/")] == [call["id"]]
    assert t.get("boris", "calls/") == []
    t.roll("boris", expect=403, call=call["id"], faces=[2] * 5)
    t.roll("alice", expect=400, call=call["id"], traits=["Wits"], faces=[2, 3, 4, 5, 9])
    answer = t.roll("alice", call=call["id"], faces=[2, 3, 4, 5, 9])
    assert answer["visibility"] == "blind" and answer["redacted"] is True
    gm_view = t.get("gm", f"checks/{answer['seq']}/")
    assert first_roll(gm_view)["check"]["pool"] == 5, "the GM's call decides the traits"
    assert gm_view["label"] == "Notice the draft"
    assert t.get("alice", "calls/") == []
    t.roll("alice", expect=409, call=call["id"], faces=[2] * 5)  # answered already


def test_server_dice_when_manual_dice_is_off(table):
    t = table("cofd", manual=False)
    t.roll("alice", expect=400, traits=["Wits"], faces=[1, 2, 3])
    check = t.roll("alice", traits=["Wits", "Occult"])
    assert check["manual"] is False and check["data"]["dice"] == "server"
    assert len(first_roll(check)["faces"]) >= 5
    manual = table("cofd")
    response = manual.roll("alice", expect=400, traits=["Wits"])
    assert "faces" in response


def test_rolling_needs_an_open_session(table, users):
    t = table("cofd")
    services.end_session(campaign=t.campaign, actor=users["gm"])
    before = t.events()
    error = t.roll("alice", expect=409, traits=["Wits"], faces=[1, 2, 3])
    assert "no session is open" in error["session"][0]
    assert t.events() == before


def test_extra_nice_is_refused_on_a_roll_made_while_it_was_off(table):
    """As Fortune is: the roll was made without extra Nice!, so none is offered or taken on it
    after the GM turns the option on (it was taken again and again, granting nothing)."""
    t = table("nice_damnit", extra_nice=False)
    check = t.roll("alice", traits=["Firearms", "Quick draw"], faces=[4, 4])  # T = 13
    set_options(t, extra_nice=True)
    assert t.get("alice", f"checks/{check['seq']}/")["follow_ups"] == []
    body = refused(t, "alice", f"checks/{check['seq']}/extra-nice/", {"count": 2}, 409, "check")
    assert "made without extra Nice!" in str(body)
    fresh = t.roll("alice", traits=["Firearms", "Quick draw"], faces=[4, 4])
    assert [o["kind"] for o in fresh["follow_ups"]] == ["extra_nice"]
