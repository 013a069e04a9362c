"""`offers` skips a follow-up the roll alone has closed (`eligibility.CLOSED_BY_ROLL`: its kind,
its result, what was taken of it), and a roll's own follow-ups once its session is over, without
asking the rule (#17). It must decide exactly what
asking every rule decides: for every check of tables played through every follow-up, hidden
rolls, reveals and a new chapter, and for every member, the offers and a catch-up's frames are
the same with the shortcut and without it; and wherever the shortcut says closed, the rule
refuses it even to the GM."""

from __future__ import annotations

from typing import Any

import pytest

from campaign import services
from campaign.errors import DomainError
from campaign.models import Campaign, Membership
from eventlog.recorders import recorder
from rolls.checks import eligibility
from rolls.models import Check
from rolls.reads.present import SharedPage

pytestmark = pytest.mark.django_db


def _cofd(t, gm) -> None:
    failure, success = {"traits": ["Wits"], "faces": [2, 3, 4]}, {"traits": ["Wits"]}
    taken = t.roll("alice", **failure)
    t.post("alice", f"checks/{taken['seq']}/dramatic-failure/", expect=200)
    t.roll("alice", **failure)  # the chapter's allowance is taken: closed by the table
    t.roll("boris", **failure)  # open: boris has not taken his
    t.roll("boris", **success, faces=[8, 9, 2])
    t.roll("alice", pool=-3, traits=["Wits"], faces=[1])  # a natural dramatic failure
    t.roll("alice", **failure, visibility="private")
    blind = t.roll("gm", character=str(t.characters["boris"].pk), visibility="blind", **failure)
    old = t.roll("boris", **failure, visibility="blind")
    services.end_chapter(campaign=t.campaign, actor=gm)  # old rolls' period is over
    services.start_chapter(campaign=t.campaign, actor=gm, title="Two")
    t.post("gm", f"checks/{old['seq']}/reveal/", expect=200)
    fresh = t.roll("alice", **failure, visibility="blind")
    t.post("gm", f"checks/{fresh['seq']}/reveal/", expect=200)  # now alice may act on it
    t.roll("boris", **failure, visibility="blind")  # a reveal is still open to the GM
    assert blind


def _age(t, gm) -> None:
    rolled = t.roll("alice", traits=["Dexterity"], target=13, faces=[3, 3, 4])
    t.post("alice", f"checks/{rolled['seq']}/fortune/", {"die": 0, "value": 6}, expect=200)
    t.roll("alice", traits=["Dexterity"], target=11, faces=[1, 3, 3])
    t.roll("boris", traits=["Dexterity"], target=11, faces=[6, 5, 2], visibility="private")
    t.roll("alice", traits=["Dexterity"], focus_required=True, target=11, faces=[])
    hidden = t.roll("boris", traits=["Dexterity"], target=11, faces=[2, 2, 2], visibility="blind")
    t.post("gm", f"checks/{hidden['seq']}/reveal/", expect=200)
    services.change_options(campaign=t.campaign, actor=gm, changes={"fortune_dice": False})
    t.roll("alice", traits=["Dexterity"], target=11, faces=[1, 3, 3])
    services.change_options(campaign=t.campaign, actor=gm, changes={"fortune_dice": True})


def _nice_damnit(t, gm) -> None:
    quick = {"traits": ["Firearms", "Quick draw"]}
    chips = t.roll("alice", **quick, faces=[4, 4])
    t.post("alice", f"checks/{chips['seq']}/extra-nice/", {"count": 2}, expect=200)
    t.roll("alice", **quick, faces=[4, 4])
    t.roll("boris", **quick, faces=[1, 2])  # the bad band: none allowed
    t.roll("boris", **quick, faces=[5, 6], visibility="private")
    hidden = t.roll("alice", **quick, faces=[3, 4], visibility="blind")
    t.post("gm", f"checks/{hidden['seq']}/reveal/", expect=200)


def _plain(t, gm) -> None:
    for who, visibility in (("alice", "public"), ("boris", "private"), ("alice", "blind")):
        t.roll(who, visibility=visibility, **TRAITS[t.campaign.system])
    hidden = t.roll("boris", visibility="blind", **TRAITS[t.campaign.system])
    t.post("gm", f"checks/{hidden['seq']}/reveal/", expect=200)


TRAITS = {"d6pool": {"traits": ["Strength"]}, "storyteller": {"traits": ["Physical", "Brawl"]}}
PLAYED = {
    "cofd": (_cofd, {}),
    "age": (_age, {}),
    "nice_damnit": (_nice_damnit, {}),
    "d6pool": (_plain, {"manual": False}),
    "storyteller": (_plain, {"manual": False}),
}


def _offers(campaign: Campaign, viewers: list[Membership]) -> list[Any]:
    """Every check's offers for every viewer, each viewer reading the table as offers do (the
    module's `offers`, which a test may replace)."""
    checks = list(Check.objects.filter(campaign=campaign).order_by("seq"))
    found = []
    for viewer in viewers:
        now = eligibility.Now(campaign, knower=viewer)
        found += [(viewer.user_id, c.seq, eligibility.offers(c, viewer, now)) for c in checks]
    return found


def _frames(campaign: Campaign, viewers: list[Membership]) -> list[list[tuple[str, bool]]]:
    return [
        SharedPage(recorder().page(campaign.pk, after=0, limit=10_000)).texts_for(viewer)
        for viewer in viewers
    ]


def _every_rule_asked(check: Check, viewer: Membership, now: eligibility.Now) -> list[Any]:
    """`offers` the long way: every follow-up of the system asked of its rule, no shortcut."""
    shown = []
    for kind in (*eligibility.BY_SYSTEM.get(now.campaign.system, ()), eligibility.REVEAL):
        try:
            offer = eligibility.require(kind, check, viewer, now)
        except DomainError:
            continue
        if offer.choices:
            shown.append(offer.as_json())
    return shown


def _same_as_every_rule_asked(campaign: Campaign, monkeypatch) -> set[str]:
    """The offers and a catch-up's frames for every member, with the shortcuts and without;
    the kinds offered."""
    campaign = Campaign.objects.get(pk=campaign.pk)
    viewers = list(Membership.objects.filter(campaign=campaign).order_by("user_id"))
    assert {v.role for v in viewers} == {"gm", "player", "observer"}
    shortcut, frames = _offers(campaign, viewers), _frames(campaign, viewers)
    with monkeypatch.context() as patched:
        patched.setattr(eligibility, "offers", _every_rule_asked)
        assert _offers(campaign, viewers) == shortcut
        assert _frames(campaign, viewers) == frames
    return {offer["kind"] for _, _, offers in shortcut for offer in offers}


@pytest.mark.parametrize("system", sorted(PLAYED))
def test_the_shortcut_offers_what_every_rule_offers(system, table, users, monkeypatch):
    """Also once the session is over: its rolls' own follow-ups are closed without asking
    (`_in_open_session`), a reveal is not."""
    play, options = PLAYED[system]
    t = table(system, **options)
    play(t, users["gm"])
    offered = _same_as_every_rule_asked(t.campaign, monkeypatch)
    assert "reveal" in offered  # the tables leave offers open, not only closed ones
    if system != "d6pool" and system != "storyteller":
        assert len(offered) == 2, offered
    services.end_session(campaign=t.campaign, actor=users["gm"])
    services.start_session(campaign=t.campaign, actor=users["gm"], title="Saturday")
    assert _same_as_every_rule_asked(t.campaign, monkeypatch) == {"reveal"}


@pytest.mark.parametrize("system", sorted(PLAYED))
def test_a_follow_up_closed_by_the_roll_is_refused_even_to_the_gm(system, table, users):
    """The rule itself refuses the GM (who may do all a member may) every follow-up the
    shortcut skips."""
    play, options = PLAYED[system]
    t = table(system, **options)
    play(t, users["gm"])
    campaign = Campaign.objects.get(pk=t.campaign.pk)
    gm = Membership.objects.get(campaign=campaign, user=users["gm"])
    closed = 0
    for check in Check.objects.filter(campaign=campaign):
        for kind in (*eligibility.BY_SYSTEM.get(system, ()), eligibility.REVEAL):
            if eligibility.CLOSED_BY_ROLL[kind](check):
                closed += 1
                with pytest.raises(DomainError):
                    eligibility.require(kind, check, gm, eligibility.Now(campaign))
    assert closed
