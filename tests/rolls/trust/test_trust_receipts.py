"""Receipts: at a session's end everyone sees its final chain hash (and never the seed), and can
later hold any export of the campaign against it, or against an export saved earlier."""

from __future__ import annotations

import json

from campaign import services
from campaign.models import Membership
from eventlog.chain import document_hash
from eventlog.models import Event
from rolls.reads.selectors import events_for
from rolls.trust.export import export_campaign
from rolls.trust.verify import Receipt, check_export, main
from tests.rolls.trust.conftest import roll


def test_every_participant_sees_the_final_hash_and_no_seed_at_session_end(play, users):
    campaign = play("age")
    ended = Event.objects.get(campaign=campaign, type="session.ended")
    last = Event.objects.get(campaign=campaign, seq=ended.seq - 1)
    for name in ("gm", "alice", "boris", "olga"):  # olga only observes
        membership = Membership.objects.get(campaign=campaign, user=users[name])
        (shown,) = events_for(membership=membership, types=["session.ended"])
        assert not shown["redacted"], name
        payload = shown["payload"]
        assert (payload["final_seq"], payload["final_hash"]) == (last.seq, last.hash), name
        assert set(payload) == {"id", "number", "final_seq", "final_hash"}, name


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
    assert report.ok and [s.ok for s in report.sessions] == [True, True]

    path = tmp_path / "later.json"
    path.write_text(json.dumps(document))
    assert main([str(path), "--receipt", kept]) == 0
    out = capsys.readouterr().out
    assert f"receipt #{kept}" in out and "2 closed session(s) proven" in out
    assert main([str(path), "--receipt", f"{ended['payload']['final_seq']}:{'0' * 64}"]) == 1
    assert "history up to here changed after the receipt" in capsys.readouterr().out


def test_an_earlier_export_pins_the_history_of_a_later_one(play, users, tmp_path, capsys):
    """A witness's saved export against a rewritten copy: the attacker edited an old roll and
    re-hashed every event after it, so the later copy verifies on its own, but not against the
    head the witness kept."""
    campaign = play("d6pool")
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps(export_campaign(campaign)))
    forged = export_campaign(campaign)
    target = next(e for e in forged["events"] if e["type"] == "check.rolled")
    target["visibility"] = "blind"  # hide an embarrassing public roll after the fact
    target["payload"]["salt"] = "ab" * 16
    _rehash_from(forged, target["seq"])
    later = tmp_path / "later.json"
    later.write_text(json.dumps(forged))
    assert main([str(later)]) == 0, "self-consistent: nothing inside the copy shows the edit"
    capsys.readouterr()
    assert main([str(later), "--earlier", str(earlier)]) == 1
    assert "history up to here changed after the receipt" in capsys.readouterr().out


def _rehash_from(document, seq):
    events = document["events"]
    prev = events[seq - 2]["hash"] if seq > 1 else "0" * 64
    for event in events[seq - 1 :]:
        event["prev_hash"] = prev
        if event["type"] == "session.ended":  # a careful forger fixes the receipt inside too
            event["payload"]["final_hash"] = prev
        event["hash"] = prev = document_hash(event)
    document["campaign"]["head_hash"] = prev
