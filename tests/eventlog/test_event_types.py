"""The event vocabulary: every type is named once, projected, understood by the verifier, shared
with the JS, and the events the services write carry the payload the vocabulary describes."""

from __future__ import annotations

import copy

from eventlog import projections
from eventlog.chain import GENESIS, document_hash
from eventlog.event_types import (
    ALL_TYPES,
    FOLLOWUP_TYPES,
    PAYLOADS,
    SEALED_KEY,
    javascript_module,
)
from eventlog.management.commands.export_event_types import EVENTS_JS
from eventlog.replay import replayed_types
from rolls.systems import SYSTEM_IDS
from rolls.trust.export import export_campaign
from rolls.trust.verify import CHAIN_ONLY_TYPES, StreamVerifier, check_export
from tests.rolls.trust.conftest import play  # noqa: F401  (a session of every kind of roll)


def test_every_type_is_named_once():
    assert len(set(ALL_TYPES)) == len(ALL_TYPES)
    assert set(FOLLOWUP_TYPES) <= set(ALL_TYPES)


def test_every_type_has_a_projector():
    unprojected = [t for t in ALL_TYPES if not projections._projectors.get(t)]
    assert unprojected == []
    assert set(projections._projectors) <= set(ALL_TYPES), "a projector for an unnamed type"


def test_every_type_has_a_replayer_for_rebuilds():
    assert replayed_types() == set(ALL_TYPES)


def test_every_type_is_understood_by_the_verifier():
    handled = set(StreamVerifier(1)._handlers)
    assert handled.isdisjoint(CHAIN_ONLY_TYPES)
    assert handled | CHAIN_ONLY_TYPES == set(ALL_TYPES)


def test_the_pages_scripts_get_the_same_names():
    assert EVENTS_JS.read_text(encoding="utf-8") == javascript_module(), (
        "static/js/events.js is out of date: run manage.py export_event_types"
    )
    for event_type in ALL_TYPES:
        assert f'"{event_type}"' in javascript_module()


def test_the_events_services_write_carry_the_payload_the_vocabulary_describes(play):  # noqa: F811
    seen = set()
    for system in SYSTEM_IDS:
        campaign = play(system, name=f"Vocabulary {system}")
        for event in campaign.events.order_by("seq"):
            assert event.type in PAYLOADS, event.type
            shape = PAYLOADS[event.type]
            keys = set(event.payload)
            assert (SEALED_KEY in keys) == (event.visibility != "public"), event.type
            keys.discard(SEALED_KEY)
            assert set(shape.always) <= keys, (event.type, set(shape.always) - keys)
            assert keys <= set(shape.always) | set(shape.optional), (event.type, keys)
            seen.add(event.type)
    assert {"check.rolled", *FOLLOWUP_TYPES} <= seen


def test_the_verifier_refuses_an_event_of_an_unknown_type(play):  # noqa: F811
    document = copy.deepcopy(export_campaign(play("cofd")))
    last = document["events"][-1]
    forged = {**last, "seq": last["seq"] + 1, "type": "check.forged", "prev_hash": last["hash"]}
    forged["hash"] = document_hash(forged)
    document["events"].append(forged)
    document["campaign"]["head_seq"], document["campaign"]["head_hash"] = (
        forged["seq"],
        forged["hash"],
    )
    problems = [str(p) for p in check_export(document).problems]
    assert any("unknown event type 'check.forged'" in p for p in problems), problems
    assert GENESIS not in problems
