"""A player attacks the hidden rolls of a game they sit in (issue #16): from everything their
copy of the log shows, before and after the session ends, they learn nothing of a roll they may
not see; once the GM reveals it, it verifies like any other."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from typing import Any

import pytest

from campaign import services
from campaign.models import Membership
from eventlog.chain import HASHED_FIELDS, canonical_json, document_hash, hashed_document
from eventlog.models import Event
from rolls.checks import followups
from rolls.checks import services as rolls
from rolls.reads.selectors import events_for
from rolls.systems import KeyedDice, resolve, roll, roll_key
from rolls.trust.export import export_campaign
from rolls.trust.verify import check_export
from tests.rolls.trust.conftest import SHEETS

HEX32 = re.compile(r"\b[0-9a-f]{64}\b")


def _age_table(make_campaign, users):
    campaign = make_campaign("age")
    hero = services.create_character(
        campaign=campaign,
        actor=users["gm"],
        name="Hero",
        traits=SHEETS["age"],
        resources={"fortune": 30},
        owner_id=users["alice"].pk,
    )
    services.start_session(campaign=campaign, actor=users["gm"])
    request = {"character": str(hero.pk), "traits": ["Dexterity"], "focus": "Acrobatics"}
    rolls.check_roll(campaign=campaign, actor=users["alice"], request={**request, "target": 11})
    private = rolls.check_roll(
        campaign=campaign,
        actor=users["alice"],
        request={**request, "target": 13, "visibility": "private", "client_seed": "aa" * 16},
    )
    followups.spend_fortune(
        campaign=campaign, actor=users["alice"], seq=private.seq, die=0, value=6
    )
    return campaign, private


def _boris_copy(campaign, users) -> dict[str, Any]:
    boris = Membership.objects.get(campaign=campaign, user=users["boris"])
    return export_campaign(campaign, membership=boris)


def _oracle_hits(stub: dict[str, Any], full: Event) -> list[str]:
    """The hash-oracle attack with more than any player knows: every field of the hidden event,
    its whole payload (key, faces, outcome), all but the salt; and every face combination for
    the AGE roll. A guess that reproduces the stub's hash or sealed digest is a hit."""
    true = {name: stub[name] for name in HASHED_FIELDS if name in stub}
    character = str(full.character_id) if full.character_id else None
    payload = {k: v for k, v in full.payload.items() if k != "salt"}
    guesses = [payload]
    if full.type == "check.rolled":
        check = payload["rolls"][0]["check"]
        for faces in itertools.product(range(1, 7), repeat=3):
            rolled = {**payload["rolls"][0], "faces": list(faces)}
            rolled["result"] = resolve("age", check, list(faces))
            guesses.append({**payload, "rolls": [rolled]})
    hits = []
    for guess in guesses:
        for salt in (None, "", "0" * 32):
            body = guess if salt is None else {**guess, "salt": salt}
            unsealed = {**true, "payload": body, "character": character}
            if hashlib.sha256(canonical_json(unsealed).encode()).hexdigest() == stub["hash"]:
                hits.append("the unsealed document")
            if hashed_document(unsealed)["payload"]["sealed"] == stub["payload"]["sealed"]:
                hits.append("the sealed digest")
    return hits


@pytest.mark.parametrize("session_ended", [False, True], ids=["open", "ended"])
def test_the_hash_oracle_finds_nothing_in_a_players_copy(
    make_campaign, users, session_ended
) -> None:
    campaign, _ = _age_table(make_campaign, users)
    if session_ended:
        services.end_session(campaign=campaign, actor=users["gm"])
    copy = _boris_copy(campaign, users)
    hidden = [e for e in copy["events"] if e.get("redacted")]
    assert [e["type"] for e in hidden] == ["check.rolled", "check.fortune_spent"]
    for stub in hidden:
        full = Event.objects.get(campaign=campaign, seq=stub["seq"])
        assert _oracle_hits(stub, full) == [], stub["type"]
        assert full.payload["salt"] not in json.dumps(copy)
    assert check_export(copy).ok  # and the chain still verifies through the stubs


def test_a_revealed_roll_verifies_in_the_players_copy(make_campaign, users) -> None:
    campaign, private = _age_table(make_campaign, users)
    rolls.reveal_check(campaign=campaign, actor=users["gm"], seq=private.seq)
    services.end_session(campaign=campaign, actor=users["gm"])
    copy = _boris_copy(campaign, users)
    assert not any(e.get("redacted") for e in copy["events"])
    shown = next(e for e in copy["events"] if e["seq"] == private.seq)
    assert shown["payload"]["client_seed"] == "aa" * 16 and "salt" in shown["payload"]
    assert document_hash(shown) == shown["hash"]
    report = check_export(copy)
    assert report.ok and report.sessions[0].proven == report.sessions[0].server_rolls == 2


def _everything_boris_sees(campaign, users) -> str:
    boris = Membership.objects.get(campaign=campaign, user=users["boris"])
    return json.dumps([_boris_copy(campaign, users), events_for(membership=boris, limit=1000)])


def test_the_post_session_seed_attack_cannot_rederive_a_blind_roll(make_campaign, users) -> None:
    """Issue #16's attack: after the session ends, take every 32-byte value a player's view
    holds, as the seed or as the roll's key, with every client seed in view, and re-roll the
    GM's blind 8-dice pool. Nothing gives its faces; after the reveal, its own key does."""
    campaign = make_campaign("d6pool")
    gm = users["gm"]
    services.start_session(campaign=campaign, actor=gm)
    rolls.check_roll(campaign=campaign, actor=gm, request={"pool": 2, "client_seed": "01"})
    blind = rolls.check_roll(
        campaign=campaign, actor=gm, request={"pool": 8, "visibility": "blind"}
    )
    rolls.check_roll(campaign=campaign, actor=gm, request={"pool": 2})
    services.end_session(campaign=campaign, actor=gm)
    event = Event.objects.get(campaign=campaign, seq=blind.seq)
    faces = event.payload["rolls"][0]["faces"]
    check = event.payload["rolls"][0]["check"]

    def rederives(view: str) -> bool:
        candidates = {bytes.fromhex(h) for h in HEX32.findall(view)}
        client_seeds = {"", "01", *re.findall(r'"client_seed": "([0-9a-f]+)"', view)}
        for value, client in itertools.product(candidates, client_seeds):
            keys = [value, *(roll_key(value, i) for i in range(4))]  # as the key, as the seed
            for key in keys:
                if (
                    roll("d6pool", check, KeyedDice(key, campaign.pk, blind.seq, client))[0]
                    == faces
                ):
                    return True
        return False

    before = _everything_boris_sees(campaign, users)
    assert len(HEX32.findall(before)) > 10, "the attacker has plenty of material"
    assert not rederives(before)
    rolls.reveal_check(campaign=campaign, actor=gm, seq=blind.seq)
    assert rederives(_everything_boris_sees(campaign, users)), "the control: the reveal works"
