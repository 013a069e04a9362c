"""Campaigns played through the real services, for the trust tests: every kind of roll each
system has, follow-ups, manual dice, private and blind rolls, and a closed session."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from campaign import services
from campaign.models import Campaign
from rolls.checks import followups
from rolls.checks import services as rolls
from rolls.models import Check
from rolls.systems import nice_damnit

SHEETS: dict[str, dict[str, Any]] = {
    "d6pool": {"attributes": {"Strength": 3}, "abilities": {"Brawl": 2}},
    "storyteller": {"attributes": {"Dexterity": 3}, "abilities": {"Melee": 2}},
    "cofd": {"attributes": {"Wits": 3}, "skills": {"Occult": 2}},
    "age": {"abilities": {"Dexterity": 3}, "focuses": {"Dexterity": ["Acrobatics"]}},
    "nice_damnit": {"areas": {"Firearms": 2}, "skills": {"Quick draw": "pro_1"}},
}
TRAITS: dict[str, dict[str, Any]] = {
    "d6pool": {"traits": ["Strength", "Brawl"]},
    "storyteller": {"traits": ["Dexterity", "Melee"]},
    "cofd": {"traits": ["Wits", "Occult"]},
    "age": {"traits": ["Dexterity"], "focus": "Acrobatics", "target": 11},
    "nice_damnit": {"traits": ["Firearms", "Quick draw"]},
}
# Physical dice for a GM roll of {"pool": MANUAL_POOL[system]}: the faces each system reads.
MANUAL_POOL = {"d6pool": 2, "storyteller": 2, "cofd": 1, "age": 2, "nice_damnit": 2}
MANUAL_FACES = {
    "d6pool": [4, 1],
    "storyteller": [7, 3],
    "cofd": [7],
    "age": [3, 5, 5],
    "nice_damnit": [6, 9],
}


def roll(campaign: Campaign, actor, **request: Any) -> Check:
    return rolls.check_roll(campaign=campaign, actor=actor, request=request)


def _until(make: Callable[[], Check], wanted: Callable[[Check], bool], tries: int = 60) -> Check:
    """Roll until the (random) faces allow a follow-up; every try stays in the log."""
    for _ in range(tries):
        check = make()
        if wanted(check):
            return check
    raise AssertionError("the dice never allowed the follow-up")


def _two_sided(system: str, campaign: Campaign, users, hero, npc) -> None:
    gm, mine = users["gm"], {"character": str(hero.pk), **TRAITS[system]}
    other = {"character": str(npc.pk), "traits": TRAITS[system]["traits"][:1]}
    if system == "d6pool":
        roll(campaign, gm, **mine, against=other)
        roll(campaign, gm, **mine, against=other, mode="contest")
    elif system == "storyteller":
        roll(campaign, gm, **mine, against=other)
        actions = [{"traits": ["Dexterity", "Melee"]}, {"traits": ["Dexterity"], "label": "dodge"}]
        roll(campaign, users["alice"], character=str(hero.pk), actions=actions)
    elif system == "age":
        roll(campaign, gm, **mine, against={**other, "target": 11})


def _followups(system: str, campaign: Campaign, users, hero) -> None:
    alice, mine = users["alice"], {"character": str(hero.pk), **TRAITS[system]}
    if system == "cofd":
        helper = roll(campaign, users["gm"], pool=2)  # a helper is another's roll (RULES 3.7)
        roll(campaign, alice, **mine, helpers=[helper.seq])
        failed = _until(
            lambda: roll(campaign, alice, character=str(hero.pk), traits=["Wits"]),
            lambda c: c.outcome == "failure",
        )
        followups.take_dramatic_failure(campaign=campaign, actor=alice, seq=failed.seq)
    elif system == "age":
        check = roll(campaign, alice, **mine)
        followups.spend_fortune(campaign=campaign, actor=alice, seq=check.seq, die=0, value=6)
    elif system == "nice_damnit":
        check = _until(
            lambda: roll(campaign, alice, **mine),
            lambda c: nice_damnit.extra_nice_allowed(c.data["rolls"][0]["result"]["total"]) > 0,
        )
        followups.take_extra_nice(campaign=campaign, actor=alice, seq=check.seq, count=1)


@pytest.fixture
def play(make_campaign, users) -> Callable[..., Campaign]:
    """``play(system, end=True)``: a campaign with one session of every kind of roll it has."""

    def make(system: str, *, end: bool = True, name: str = "Trust table") -> Campaign:
        campaign = make_campaign(system, name=name)
        gm, alice = users["gm"], users["alice"]
        resources = {"fortune": 30} if system == "age" else None
        hero = services.create_character(
            campaign=campaign,
            actor=gm,
            name="Hero",
            traits=SHEETS[system],
            resources=resources,
            owner_id=alice.pk,
        )
        npc = services.create_character(
            campaign=campaign, actor=gm, name="Foe", traits=SHEETS[system]
        )
        services.start_chapter(campaign=campaign, actor=gm)
        services.start_session(campaign=campaign, actor=gm, title="Night one")
        mine = {"character": str(hero.pk), **TRAITS[system]}
        roll(campaign, alice, **mine, label="in the open")
        roll(campaign, alice, **mine, visibility="private", label="for my eyes")
        roll(campaign, gm, pool=3, visibility="blind", label="the GM's secret")
        _two_sided(system, campaign, users, hero, npc)
        _followups(system, campaign, users, hero)
        services.change_options(campaign=campaign, actor=gm, changes={"manual_dice": True})
        roll(campaign, gm, pool=MANUAL_POOL[system], faces=MANUAL_FACES[system], label="real dice")
        services.change_options(campaign=campaign, actor=gm, changes={"manual_dice": False})
        roll(campaign, alice, **mine, label="back to server dice")
        if end:
            services.end_session(campaign=campaign, actor=gm)
        campaign.refresh_from_db()
        return campaign

    return make
