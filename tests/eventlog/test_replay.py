"""The replay behind `rebuild_projections`: it checks each event's hash from the stored text (a
hidden event's seal included) and rebuilds every read model of a session of every kind of roll
to the bytes the live projectors wrote."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from eventlog.chain import canonical_json
from eventlog.models import Event
from eventlog.recorders import recorder
from eventlog.replay import stored_hash
from rolls.systems import SYSTEM_IDS
from tests.eventlog.forgery import rewrite_payload
from tests.eventlog.tables import assert_rebuild_equals_live, stored_tables
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
    rewrite_payload(hidden.pk, canonical_json(dict(hidden.payload, label="forged")))
    before = stored_tables(campaign.pk)
    with pytest.raises(CommandError, match="not rebuilt"):
        call_command("rebuild_projections", campaign=[campaign.pk])
    assert stored_tables(campaign.pk) == before


@pytest.mark.parametrize(
    "payload",
    [
        {"next_key": "ab" * 32, "label": "a blind roll"},  # the usual key commitment
        {"next_key": 'not "a" hash', "label": "ünïcode"},  # escaped the long way
        {"next_key": 5},
        {"label": "no commitment"},
    ],
)
@pytest.mark.parametrize("visibility", ["public", "private", "blind"])
def test_the_hash_from_the_text_is_the_documents_for_any_key_commitment(payload, visibility):
    from eventlog.chain import canonical_json, document_hash, stored_text_hash

    ids = (
        "11111111-1111-1111-1111-111111111111",
        None,
        None,
        "2" * 8 + "-2222-2222-2222-" + "2" * 12,
    )
    document = {
        "campaign": 7,
        "seq": 3,
        "type": "check.rolled",
        "payload": payload,
        "actor": 4,
        "created_at": "2026-12-01T01:11:44.092900+00:00",
        "visibility": visibility,
        "session": ids[0],
        "scene": ids[1],
        "chapter": ids[2],
        "character": ids[3],
        "prev_hash": "c" * 64,
    }
    from_text = stored_text_hash(
        campaign=7,
        seq=3,
        type="check.rolled",
        text=canonical_json(payload),
        actor=4,
        created_at=document["created_at"],
        visibility=visibility,
        session=ids[0],
        scene=ids[1],
        chapter=ids[2],
        character=ids[3],
        prev_hash="c" * 64,
    )
    assert from_text == document_hash(document)


def test_stored_payloads_decode_as_json_decodes_them():
    from eventlog.recorders import decode

    for text in (
        '{"b":[1,2.5,-0.0,null,true],"a":{"z":"бросок","y":"\\u00e9"},"c":2147483647}',
        '"\\ud800"',  # a lone surrogate's escape: orjson refuses it, json takes it
        "NaN",
    ):
        decoded = decode(text)
        expected = json.loads(text)
        assert repr(decoded) == repr(expected)
    assert list(decode('{"b":1,"a":2}')) == ["b", "a"]  # the stored order, as json keeps it


def test_a_replay_leaves_the_cycle_collector_as_it_was(play):  # noqa: F811
    import gc

    campaign = play("cofd")
    assert gc.isenabled()
    call_command("rebuild_projections", campaign=[campaign.pk], stdout=None)
    assert gc.isenabled()
