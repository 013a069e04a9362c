"""Follow-ups after a roll: the intentional dramatic failure (RULES 3.5) and Fortune (RULES 4.2),
items 3, 5 and 6 of #12."""

from __future__ import annotations

from collections import Counter

import pytest

from campaign import services
from rolls.models import Check, RuleUse
from tests.rolls.checks.conftest import first_roll
from tests.rolls.checks.rulebook import refused, set_options
from tests.rolls.checks.test_concurrency import N, run_at_once


def test_a_second_dramatic_failure_on_the_same_roll_is_a_conflict(table):
    t = table("cofd", intentional_dramatic_failure="unlimited")
    check = t.roll("alice", traits=["Wits"], faces=[2, 3, 4])
    t.post("alice", f"checks/{check['seq']}/dramatic-failure/", expect=200)
    body = refused(t, "alice", f"checks/{check['seq']}/dramatic-failure/", {}, 409, "check")
    assert "already" in str(body)
    assert t.character("alice").resources["beats"] == 1


def test_a_natural_dramatic_failure_or_a_success_cannot_be_converted(table):
    t = table("cofd", intentional_dramatic_failure="unlimited")
    chance = t.roll("alice", pool=-3, traits=["Wits"], faces=[1])
    refused(t, "alice", f"checks/{chance['seq']}/dramatic-failure/", {}, 409, "check")
    win = t.roll("alice", traits=["Wits"], faces=[8, 3, 4])
    refused(t, "alice", f"checks/{win['seq']}/dramatic-failure/", {}, 409, "check")


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_dramatic_failures_on_one_roll_one_winner_49_conflicts(table, users):
    t = table("cofd", intentional_dramatic_failure="unlimited")
    check = t.roll("alice", traits=["Wits"], faces=[2, 3, 4])
    path = f"{t.url}/checks/{check['seq']}/dramatic-failure/"
    statuses = run_at_once(users["alice"], [(path, {})] * N)
    assert Counter(statuses) == {200: 1, 409: N - 1}
    assert t.character("alice").resources["beats"] == 1
    assert RuleUse.objects.filter(rule="intentional_dramatic_failure").count() == 1
    assert Check.objects.get(campaign=t.campaign, seq=check["seq"]).outcome == "dramatic_failure"


def test_fortune_on_an_automatic_failure_is_refused_and_costs_nothing(table):
    t = table("age")
    check = t.roll("alice", traits=["Dexterity"], focus_required=True, target=11, faces=[])
    assert check["outcome"] == "auto_failure"
    body = refused(
        t, "alice", f"checks/{check['seq']}/fortune/", {"die": 0, "value": 4}, 409, "check"
    )
    assert "no dice" in str(body)
    assert t.character("alice").resources["fortune"] == 6


def test_fortune_on_a_roll_made_while_fortune_dice_were_off_says_so(table):
    t = table("age", fortune_dice=False)
    check = t.roll("alice", traits=["Dexterity"], target=11, faces=[1, 3, 3])
    set_options(t, fortune_dice=True)
    body = refused(
        t, "alice", f"checks/{check['seq']}/fortune/", {"die": 0, "value": 4}, 409, "check"
    )
    assert "made without Fortune dice" in str(body)
    assert "are off" not in str(body)
    fresh = t.roll("alice", traits=["Dexterity"], target=11, faces=[1, 3, 3])
    set_options(t, fortune_dice=False)
    body = refused(
        t, "alice", f"checks/{fresh['seq']}/fortune/", {"die": 0, "value": 4}, 409, "check"
    )
    assert "off in this campaign" in str(body)
    assert t.character("alice").resources["fortune"] == 6
    assert first_roll(t.get("alice", f"checks/{fresh['seq']}/"))["result"]["total"] == 10


def _kinds(shown: dict) -> list[str]:
    return [offer["kind"] for offer in shown["follow_ups"]]


@pytest.mark.parametrize("mode", ["per_chapter", "per_scene"])
def test_the_answer_offers_a_dramatic_failure_only_while_the_period_allows_it(table, users, mode):
    """The answer's offers take the dramatic failures taken from the check's own read of its
    table under the lock; they must say what a fresh read of the same roll says, for the roller
    and the GM, after a dramatic failure open or hidden."""
    from campaign import services

    t = table("cofd", intentional_dramatic_failure=mode)
    if mode == "per_scene":
        services.start_scene(campaign=t.campaign, actor=users["gm"], title="The gate")
    failure = {"traits": ["Wits"], "faces": [2, 3, 4]}
    first = t.roll("alice", **failure)
    assert _kinds(first) == ["dramatic_failure"]
    t.post("alice", f"checks/{first['seq']}/dramatic-failure/", expect=200)
    second = t.roll("alice", **failure)
    assert _kinds(second) == []  # taken this chapter / scene
    assert second["follow_ups"] == t.get("alice", f"checks/{second['seq']}/")["follow_ups"]
    others = t.roll("boris", **failure)  # another character's allowance is their own
    assert _kinds(others) == ["dramatic_failure"]
    # The GM's blind roll for boris, turned into a dramatic failure: boris's next answer offers
    # what boris may know, as a fresh read of it does.
    blind = t.roll("gm", character=str(t.characters["boris"].pk), visibility="blind", **failure)
    t.post("gm", f"checks/{blind['seq']}/dramatic-failure/", expect=200)
    after = t.roll("boris", **failure)
    assert after["follow_ups"] == t.get("boris", f"checks/{after['seq']}/")["follow_ups"]
    gm_view = t.roll("gm", character=str(t.characters["boris"].pk), **failure)
    assert _kinds(gm_view) == []  # the GM knows boris took it
    assert gm_view["follow_ups"] == t.get("gm", f"checks/{gm_view['seq']}/")["follow_ups"]


@pytest.mark.parametrize(
    ("before", "after", "taken"),
    [
        ("per_scene", "per_chapter", 1),
        ("per_chapter", "per_scene", 1),
        ("unlimited", "per_chapter", 2),
    ],
)
def test_switching_the_dramatic_failure_option_hands_out_no_second_one_in_a_period(
    table, users, before, after, taken
):
    """RULES A.2: one per chapter (or scene) per character. One taken while the option named
    another period (or none) is still a roll of this chapter and scene: the GM's switch does
    not reopen it. The panel, the offers and the refusal say the same."""
    t = table("cofd", intentional_dramatic_failure=before)
    services.start_scene(campaign=t.campaign, actor=users["gm"])
    for _ in range(taken):
        check = t.roll("alice", traits=["Wits"], faces=[2, 3, 4])
        t.post("alice", f"checks/{check['seq']}/dramatic-failure/", expect=200)
    set_options(t, intentional_dramatic_failure=after)
    again = t.roll("alice", traits=["Wits"], faces=[2, 3, 4])
    assert again["follow_ups"] == []
    body = refused(t, "alice", f"checks/{again['seq']}/dramatic-failure/", {}, 409, "check")
    assert "already taken" in str(body)
    assert t.character("alice").resources["beats"] == taken
    state = t.get("alice", "state/")
    mine = next(c for c in state["characters"] if c["id"] == str(t.characters["alice"].pk))
    period = after.removeprefix("per_")
    assert mine["flags"] == [
        {"rule": "dramatic_failure", "period": period, "used": True, "open": True}
    ]
    # A new scene (per_scene) or chapter (per_chapter) opens it again.
    if after == "per_scene":
        services.end_scene(campaign=t.campaign, actor=users["gm"])
        services.start_scene(campaign=t.campaign, actor=users["gm"])
    else:
        services.end_chapter(campaign=t.campaign, actor=users["gm"])
        services.start_chapter(campaign=t.campaign, actor=users["gm"], title="Two")
    fresh = t.roll("alice", traits=["Wits"], faces=[2, 3, 4])
    assert [offer["kind"] for offer in fresh["follow_ups"]] == ["dramatic_failure"]
    t.post("alice", f"checks/{fresh['seq']}/dramatic-failure/", expect=200)
