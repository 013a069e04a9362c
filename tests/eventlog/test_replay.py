"""The replay behind `rebuild_projections`: it checks each event's hash from the stored text (a
hidden event's seal included) and rebuilds every read model of a session of every kind of roll
to the bytes the live projectors wrote."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from eventlog.models import Event
from eventlog.recorders import recorder
from eventlog.replay import stored_hash
from rolls.systems import SYSTEM_IDS
from tests.eventlog.tables import assert_rebuild_equals_live, stored_tables
from tests.eventlog.test_rebuild import _raw
from tests.rolls.trust.conftest import play  # noqa: F401  (a session of every kind of roll)

pytestmark = pytest.mark.django_db


def test_the_hash_from_the_stored_text_is_the_chain_hash_of_every_event(play):  # noqa: F811
    visibilities = set()
    for system in SYSTEM_IDS:
        campaign = play(system, name=f"Hashes {system}")
        for row in recorder().replay_rows(campaign.pk):
            _, seq, type_, text, actor, _, created_text, visibility = row[:8]
            ids, prev_hash, hash_ = row[12:]
            visibilities.add(visibility)
            hashed = stored_hash(
                campaign.pk, seq, type_, text, actor, created_text, visibility, ids, prev_hash
            )
            assert hashed == hash_, f"{system} #{seq} ({type_}, {visibility})"
    assert visibilities == {"public", "private", "blind"}


def test_a_session_of_every_kind_of_roll_rebuilds_to_the_same_bytes(play):  # noqa: F811
    for system in SYSTEM_IDS:
        campaign = play(system, name=f"Rebuilt {system}")
        tables = assert_rebuild_equals_live(campaign.pk)
        assert tables["rolls_check"], system


def test_a_forged_hidden_roll_is_refused_and_the_read_models_stay(play):  # noqa: F811
    campaign = play("cofd")
    hidden = Event.objects.filter(campaign=campaign, visibility="blind").first()
    payload = dict(hidden.payload, label="forged")
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    _raw(
        "UPDATE campaign_event SET payload = %s, payload_text = %s WHERE id = %s",
        [text, text, hidden.pk],
    )
    before = stored_tables(campaign.pk)
    with pytest.raises(CommandError, match="not rebuilt"):
        call_command("rebuild_projections", campaign=[campaign.pk])
    assert stored_tables(campaign.pk) == before
