"""Read models are projections: rebuilding them from the log gives the incrementally kept state."""

from __future__ import annotations

import contextlib

from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from campaign import services
from campaign.errors import DomainError
from campaign.models import Campaign, Character, Membership
from eventlog import projections
from eventlog.stream import lock_stream
from tests.eventlog.tables import stored_tables


def snapshot(campaign: Campaign) -> dict:
    return stored_tables(campaign.pk)  # every read model, column by column, as stored


def rebuild(campaign: Campaign) -> None:
    with transaction.atomic():
        locked = lock_stream(campaign.pk)
        projections.rebuild(locked)


ACTORS = ("gm", "alice", "boris", "olga", "stranger")
actions = st.lists(
    st.one_of(
        st.tuples(st.just("join"), st.sampled_from(ACTORS)),
        st.tuples(
            st.just("role"), st.sampled_from(ACTORS), st.sampled_from(["gm", "player", "observer"])
        ),
        st.tuples(st.just("leave"), st.sampled_from(ACTORS)),
        st.tuples(st.just("character"), st.sampled_from(ACTORS), st.integers(0, 6)),
        st.tuples(st.just("change"), st.integers(0, 5), st.integers(0, 6), st.integers(0, 9)),
        st.tuples(st.just("chapter"), st.booleans()),
        st.tuples(st.just("session"), st.booleans()),
        st.tuples(st.just("options"), st.sampled_from(["per_chapter", "per_scene", "off"])),
        st.tuples(st.just("rename"), st.text(min_size=0, max_size=8)),
    ),
    max_size=25,
)


def perform(campaign: Campaign, users: dict, action: tuple) -> None:
    gm = users["gm"]
    kind, *args = action
    if kind == "join":
        services.join_campaign(invite_code=campaign.invite_code, user=users[args[0]])
    elif kind == "role":
        services.change_role(campaign=campaign, actor=gm, user_id=users[args[0]].pk, role=args[1])
    elif kind == "leave":
        services.leave_campaign(campaign=campaign, actor=gm, user_id=users[args[0]].pk)
    elif kind == "character":
        services.create_character(
            campaign=campaign,
            actor=users[args[0]],
            name=f"Hero {args[1]}",
            traits={"attributes": {"Wits": 1 + args[1]}, "skills": {"Occult": args[1]}},
        )
    elif kind == "change":
        characters = list(Character.objects.filter(campaign=campaign))
        if characters:
            character = characters[args[0] % len(characters)]
            services.change_character(
                campaign=campaign,
                actor=gm,
                character=character,
                traits={"attributes": {"Wits": 1 + args[1]}},
                resources={"beats": args[2]},
            )
    elif kind in ("chapter", "session"):
        start, end = {
            "chapter": (services.start_chapter, services.end_chapter),
            "session": (services.start_session, services.end_session),
        }[kind]
        if args[0]:
            start(campaign=campaign, actor=gm, title=f"{kind} title")
        else:
            end(campaign=campaign, actor=gm)
    elif kind == "options":
        services.change_options(
            campaign=campaign, actor=gm, changes={"intentional_dramatic_failure": args[0]}
        )
    elif kind == "rename":
        services.rename_campaign(campaign=campaign, actor=gm, name=args[0])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=actions)
def test_rebuilding_from_the_log_equals_the_incremental_state(users, steps):
    campaign = services.create_campaign(name="Prop", system="cofd", created_by=users["gm"])
    for step in steps:
        # Refused actions append nothing; the property covers what was accepted.
        with contextlib.suppress(DomainError):
            perform(campaign, users, step)
    incremental = snapshot(campaign)
    rebuild(campaign)
    assert snapshot(campaign) == incremental


def test_rebuild_projections_command_restores_wiped_read_models(make_campaign, users, capsys):
    campaign = make_campaign("age")
    services.create_character(
        campaign=campaign,
        actor=users["alice"],
        name="Naomi",
        traits={"abilities": {"Dexterity": 3}},
    )
    services.start_chapter(campaign=campaign, actor=users["gm"], title="Prologue")
    before = snapshot(campaign)
    Character.objects.filter(campaign=campaign).delete()
    Membership.objects.filter(campaign=campaign).delete()
    Campaign.objects.filter(pk=campaign.pk).update(name="wiped", options={})
    call_command("rebuild_projections")
    assert snapshot(campaign) == before
    assert "rebuilt" in capsys.readouterr().out
