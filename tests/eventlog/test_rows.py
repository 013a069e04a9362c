"""Instances from hand-written reads (`eventlog.rows`) are the ORM's: same values, same state,
usable as any instance the ORM loaded (related objects, saving)."""

from __future__ import annotations

from django.db import connection
from django.db.models.signals import post_init

from campaign import services
from campaign.models import Campaign, Character, Membership
from eventlog import rows


def _read(model, pk):
    table = model._meta.db_table
    found = rows.fetchone(
        f"SELECT {rows.columns(model, 't')} FROM {table} t WHERE t.id = %s",
        (model._meta.pk.get_db_prep_value(pk, connection),),
    )
    return rows.instance(model, found)


def _values(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


def test_an_instance_read_by_hand_equals_the_orms(make_campaign, users):
    campaign = make_campaign("cofd")
    character = services.create_character(
        campaign=campaign, actor=users["alice"], name="Marianne", traits={"attributes": {"Wits": 3}}
    )
    membership = Membership.objects.get(campaign=campaign, user=users["alice"])
    for model, pk in (
        (Campaign, campaign.pk),
        (Character, character.pk),
        (Membership, membership.pk),
    ):
        by_hand, orm = _read(model, pk), model.objects.get(pk=pk)
        assert type(by_hand) is model and _values(by_hand) == _values(orm)
        assert (by_hand._state.adding, by_hand._state.db) == (False, orm._state.db)
    read = _read(Membership, membership.pk)
    assert read.campaign == campaign and read.user == membership.user  # related objects load
    read.role = "observer"
    read.save(update_fields=["role"])
    assert Membership.objects.get(pk=membership.pk).role == "observer"


def test_a_model_watched_as_it_is_made_is_built_the_orms_way(make_campaign):
    campaign = make_campaign("cofd")
    seen = []

    def watch(sender, instance, **kwargs):
        seen.append(instance)

    post_init.connect(watch, sender=Campaign)
    try:
        read = _read(Campaign, campaign.pk)
    finally:
        post_init.disconnect(watch, sender=Campaign)
    assert seen == [read] and _values(read) == _values(campaign)
