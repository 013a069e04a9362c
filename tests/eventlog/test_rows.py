"""Instances from hand-written reads (`eventlog.rows`) are the ORM's: same values, same state,
usable as any instance the ORM loaded (related objects, saving)."""

from __future__ import annotations

from datetime import UTC

import pytest
from django.db import connection
from django.db.models.signals import post_init
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


# --- rows to insert ---------------------------------------------------------------------------


def _state(instance) -> tuple:
    return instance._state.adding, instance._state.db


def test_a_row_made_for_inserting_is_the_models_own(make_campaign):
    """`rows.new` is `Model(**values)`: the values given, every other field's default (a
    callable's anew for each row), an unsaved state."""
    from rolls.models import Check

    campaign = make_campaign("cofd")
    given = {"campaign_id": campaign.pk, "seq": 7, "kind": "single", "audience": [1, 2]}
    made, constructed = rows.new(Check, given), Check(**given)
    assert type(made) is Check and _values(made) == _values(constructed)
    assert _state(made) == _state(constructed) == (True, None)
    other = rows.new(Check, {"campaign_id": campaign.pk, "seq": 8})
    assert other.amendments == {} and other.amendments is not made.amendments
    assert made.campaign == campaign  # its related objects load as the model's do


def test_a_name_that_is_no_stored_field_is_the_models_to_take_or_refuse(make_campaign):
    from rolls.models import Check

    with pytest.raises(TypeError, match="nonsense"):
        Check(nonsense=1)
    with pytest.raises(TypeError, match="nonsense"):
        rows.new(Check, {"nonsense": 1})
    campaign = make_campaign("cofd")
    made = rows.new(Check, {"campaign": campaign, "seq": 1})  # a related object, by its name
    assert made.campaign_id == campaign.pk and made.seq == 1


def test_a_row_watched_as_it_is_made_is_made_the_models_way():
    from rolls.models import Check

    seen = []

    def watch(sender, instance, **kwargs):
        seen.append(instance)

    post_init.connect(watch, sender=Check)
    try:
        made = rows.new(Check, {"seq": 3})
    finally:
        post_init.disconnect(watch, sender=Check)
    assert seen == [made] and made.seq == 3


def _prepared(value) -> tuple:
    """A prepared value as compared: its type and what it wraps (psycopg's Jsonb, Int8, …)."""
    return type(value), getattr(value, "obj", value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_values_are_prepared_as_the_orm_prepares_them(data):
    """`rows.db_values` gives what each field's `get_db_prep_save` gives, on this database, or
    raises what it raises: for every stored field of the rows the hot path inserts, and values
    of every type the columns meet (and some they must refuse)."""
    from campaign.models import IdempotentRequest
    from eventlog.models import Event
    from eventlog.projections import written_fields
    from rolls.models import Check, RuleUse

    model = data.draw(st.sampled_from([Check, Event, RuleUse, IdempotentRequest]))
    fields = written_fields(model)
    anything = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.text(max_size=8),
        st.uuids(),
        st.datetimes(timezones=st.just(UTC)),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    )
    values = [data.draw(anything) for _ in fields]
    expected = []
    for field, value in zip(fields, values, strict=True):
        try:
            expected.append(_prepared(field.get_db_prep_save(value, connection)))
        except Exception as error:  # the ORM refuses it: so must db_values
            with pytest.raises(type(error)):
                rows.db_values(fields, values, connection)
            return
    got = rows.db_values(fields, values, connection)
    assert [_prepared(value) for value in got] == expected
