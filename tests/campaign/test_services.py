"""Bad input is refused with a message naming the field, and appends nothing."""

from __future__ import annotations

import pytest

from campaign import services
from campaign.errors import Conflict, DomainError, InvalidInput, NotAllowed, NotFound
from campaign.models import Campaign, Character, Membership
from eventlog.models import Event


def event_count() -> int:
    return Event.objects.count()


def refused(error_type: type[DomainError], field: str, call, **kwargs) -> DomainError:
    before = event_count()
    with pytest.raises(error_type) as info:
        call(**kwargs)
    assert info.value.field == field, str(info.value)
    assert event_count() == before, "a refused request must append nothing"
    return info.value


def test_a_new_campaign_has_the_default_rule_options_and_its_creator_as_gm(users):
    campaign = services.create_campaign(name="Ashwood", system="cofd", created_by=users["gm"])
    assert campaign.options == {
        "intentional_dramatic_failure": "per_chapter",
        "beat_on_dramatic_failure": False,
        "retry_penalty": True,
        "modifier_cap": 5,
        "chance_die_explodes": False,
        "under_pressure": False,
        "extended": False,
        "manual_dice": False,
    }
    assert Membership.objects.get(campaign=campaign).role == "gm"


def test_unknown_system_is_refused(users):
    error = refused(
        InvalidInput,
        "system",
        services.create_campaign,
        name="X",
        system="gurps",
        created_by=users["gm"],
    )
    assert "gurps" in error.message and "cofd" in error.message
    assert not Campaign.objects.exists()


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"free_botch": "always"}, "options.free_botch"),
        ({"retry_escalation": 3}, "options.retry_escalation"),
        ({"intentional_dramatic_failure": "per_chapter"}, "options.intentional_dramatic_failure"),
        ({"manual_dice": "yes"}, "options.manual_dice"),
    ],
)
def test_invalid_rule_options_are_refused(users, options, field):
    refused(
        InvalidInput,
        field,
        services.create_campaign,
        name="X",
        system="storyteller",
        created_by=users["gm"],
        options=options,
    )
    assert not Campaign.objects.exists()


def test_changing_options_validates_and_keeps_the_rest(make_campaign, users):
    campaign = make_campaign("storyteller")
    services.change_options(campaign=campaign, actor=users["gm"], changes={"free_botch": "off"})
    campaign.refresh_from_db()
    assert campaign.options["free_botch"] == "off"
    assert campaign.options["retry_escalation"] == "seed"
    refused(
        InvalidInput,
        "options.modifier_cap",
        services.change_options,
        campaign=campaign,
        actor=users["gm"],
        changes={"modifier_cap": 3},
    )
    refused(
        NotAllowed,
        "role",
        services.change_options,
        campaign=campaign,
        actor=users["alice"],
        changes={"free_botch": "per_table"},
    )


@pytest.mark.parametrize(
    ("system", "traits", "field"),
    [
        ("cofd", {"attributes": {"Strength": 0}}, "traits.attributes.Strength"),
        ("cofd", {"disciplines": {"Celerity": 1}}, "traits.disciplines"),
        ("storyteller", {"abilities": {"Brawl": "four"}}, "traits.abilities.Brawl"),
        ("nice_damnit", {"skills": {"Quick draw": "grandmaster"}}, "traits.skills.Quick draw"),
        ("age", {"focuses": "Acrobatics"}, "traits.focuses"),
        ("d6pool", {"abilities": {"": 2}}, "traits.abilities"),
    ],
)
def test_traits_that_do_not_fit_the_system_are_refused(make_campaign, users, system, traits, field):
    campaign = make_campaign(system)
    refused(
        InvalidInput,
        field,
        services.create_character,
        campaign=campaign,
        actor=users["alice"],
        name="Bad sheet",
        traits=traits,
    )
    assert not Character.objects.exists()


def test_resources_are_checked_against_the_system(make_campaign, users):
    campaign = make_campaign("age")
    refused(
        InvalidInput,
        "resources.beats",
        services.create_character,
        campaign=campaign,
        actor=users["gm"],
        name="Amos",
        traits={},
        resources={"beats": 2},
    )
    character = services.create_character(
        campaign=campaign,
        actor=users["gm"],
        name="Amos",
        traits={},
        resources={"fortune": 12},
        owner_id=users["boris"].pk,
    )
    assert character.resources == {"fortune": 12}
    assert character.owner_id == users["boris"].pk


def test_a_second_open_session_or_chapter_is_refused(make_campaign, users):
    campaign = make_campaign()
    first = services.start_session(campaign=campaign, actor=users["gm"], title="Friday")
    error = refused(
        Conflict, "session", services.start_session, campaign=campaign, actor=users["gm"]
    )
    assert "session 1 is still open" in error.message
    services.end_session(campaign=campaign, actor=users["gm"])
    second = services.start_session(campaign=campaign, actor=users["gm"])
    assert (first.number, second.number) == (1, 2)
    services.start_chapter(campaign=campaign, actor=users["gm"])
    refused(Conflict, "chapter", services.start_chapter, campaign=campaign, actor=users["gm"])
    services.end_chapter(campaign=campaign, actor=users["gm"])
    refused(Conflict, "chapter", services.end_chapter, campaign=campaign, actor=users["gm"])


def test_only_the_gm_runs_sessions_and_players_act_for_their_own_characters(make_campaign, users):
    campaign = make_campaign()
    refused(NotAllowed, "role", services.start_session, campaign=campaign, actor=users["alice"])
    refused(
        NotFound, "campaign", services.start_session, campaign=campaign, actor=users["stranger"]
    )
    mine = services.create_character(
        campaign=campaign, actor=users["alice"], name="Marianne", traits={}
    )
    assert mine.owner_id == users["alice"].pk
    refused(
        NotAllowed,
        "character",
        services.change_character,
        campaign=campaign,
        actor=users["boris"],
        character=mine,
        name="Stolen",
    )
    refused(
        NotAllowed,
        "resources",
        services.change_character,
        campaign=campaign,
        actor=users["alice"],
        character=mine,
        resources={"beats": 5},
    )
    refused(
        NotAllowed,
        "role",
        services.create_character,
        campaign=campaign,
        actor=users["olga"],
        name="Watcher",
        traits={},
    )
    renamed = services.change_character(
        campaign=campaign, actor=users["alice"], character=mine, name="Marianne Vey"
    )
    assert renamed.name == "Marianne Vey"


def test_the_last_gm_cannot_leave_or_step_down(make_campaign, users):
    campaign = make_campaign()
    gm = users["gm"]
    refused(
        Conflict, "user_id", services.leave_campaign, campaign=campaign, actor=gm, user_id=gm.pk
    )
    refused(
        Conflict,
        "role",
        services.change_role,
        campaign=campaign,
        actor=gm,
        user_id=gm.pk,
        role="player",
    )
    services.change_role(campaign=campaign, actor=gm, user_id=users["boris"].pk, role="gm")
    services.leave_campaign(campaign=campaign, actor=gm, user_id=gm.pk)
    assert not Membership.objects.filter(campaign=campaign, user=gm).exists()


def test_joining_by_invite_code(make_campaign, users):
    campaign = make_campaign()
    refused(
        NotFound, "invite_code", services.join_campaign, invite_code="nope", user=users["stranger"]
    )
    membership = services.join_campaign(invite_code=campaign.invite_code, user=users["stranger"])
    assert membership.role == "player"
    again = services.join_campaign(invite_code=campaign.invite_code, user=users["stranger"])
    assert again.pk == membership.pk
    old_code = campaign.invite_code
    services.regenerate_invite(campaign=campaign, actor=users["gm"])
    refused(NotFound, "invite_code", services.join_campaign, invite_code=old_code, user=users["gm"])
