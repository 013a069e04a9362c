"""Receipts: at a session's end everyone sees its final chain hash and seed, and can later hold
any export of the campaign against them."""

from __future__ import annotations

import hashlib
import json

from campaign import services
from campaign.models import Event, Membership
from rolls.reads.selectors import events_for
from rolls.trust.export import export_campaign
from rolls.trust.verify import Receipt, check_export, main
from tests.rolls.trust.conftest import roll


def test_every_participant_sees_the_final_hash_and_the_seed_at_session_end(play, users):
    campaign = play("age")
    started = Event.objects.get(campaign=campaign, type="session.started")
    ended = Event.objects.get(campaign=campaign, type="session.ended")
    last = Event.objects.get(campaign=campaign, seq=ended.seq - 1)
    for name in ("gm", "alice", "boris", "olga"):  # olga only observes
        membership = Membership.objects.get(campaign=campaign, user=users[name])
        (shown,) = events_for(membership=membership, types=["session.ended"])
        assert not shown["redacted"], name
        payload = shown["payload"]
        assert (payload["final_seq"], payload["final_hash"]) == (last.seq, last.hash), name
        seed = bytes.fromhex(payload["seed"])
        assert hashlib.sha256(seed).hexdigest() == started.payload["seed_commitment"]


def test_a_receipt_from_the_feed_holds_against_a_later_export(play, users, tmp_path, capsys):
    campaign = play("cofd")
    alice = Membership.objects.get(campaign=campaign, user=users["alice"])
    (ended,) = events_for(membership=alice, types=["session.ended"])
    kept = f"{ended['payload']['final_seq']}:{ended['payload']['final_hash']}"

    services.start_session(campaign=campaign, actor=users["gm"], title="Night two")
    roll(campaign, users["gm"], pool=4)
    services.end_session(campaign=campaign, actor=users["gm"])
    document = export_campaign(campaign)
    report = check_export(document, receipts=[Receipt.parse(kept)])
    assert report.ok and [s.seed_ok for s in report.sessions] == [True, True]

    path = tmp_path / "later.json"
    path.write_text(json.dumps(document))
    assert main([str(path), "--receipt", kept]) == 0
    out = capsys.readouterr().out
    assert f"receipt #{kept}" in out and "2 closed session(s) proven from the seed" in out
    assert main([str(path), "--receipt", f"{ended['payload']['final_seq']}:{'0' * 64}"]) == 1
    assert "history up to here changed after the receipt" in capsys.readouterr().out
