"""The export document and the audit CSV: what they carry, and what a player's copy leaves out."""

from __future__ import annotations

import csv
import io
import json

from campaign import services
from campaign.models import Membership
from eventlog.models import Event
from rolls.checks import services as rolls
from rolls.models import Check
from rolls.trust.export import CSV_COLUMNS, checks_csv, export_campaign
from rolls.trust.stored_log import event_rows
from rolls.trust.verify import check_export


def member(campaign, user) -> Membership:
    return Membership.objects.get(campaign=campaign, user=user)


def test_the_export_is_the_whole_log_with_its_head(play):
    campaign = play("storyteller")
    document = json.loads(json.dumps(export_campaign(campaign)))  # plain JSON all the way
    assert document["format"] == "tablecheck-log/2"
    assert document["campaign"] == {
        "id": campaign.pk,
        "name": campaign.name,
        "system": "storyteller",
        "head_seq": campaign.head_seq,
        "head_hash": campaign.head_hash,
    }
    assert document["events"] == list(event_rows(campaign.pk))
    assert document["events"][-1]["hash"] == campaign.head_hash
    assert check_export(document).ok


def test_a_players_export_hides_what_they_may_not_see_and_still_verifies(play, users):
    campaign = play("cofd")
    blind = Event.objects.get(campaign=campaign, payload__label="the GM's secret")
    private = Event.objects.get(campaign=campaign, payload__label="for my eyes")  # alice's

    gm_copy = export_campaign(campaign, membership=member(campaign, users["gm"]))
    boris_copy = export_campaign(campaign, membership=member(campaign, users["boris"]))
    alice_copy = export_campaign(campaign, membership=member(campaign, users["alice"]))
    assert gm_copy["events"] == export_campaign(campaign)["events"]
    redacted = {e["seq"]: e for e in boris_copy["events"] if e.get("redacted")}
    assert set(redacted) == {blind.seq, private.seq}
    stub = redacted[blind.seq]
    assert set(stub["payload"]) == {"sealed", "next_key"} and stub["character"] is None
    assert stub["hash"] == blind.hash
    assert "the GM's secret" not in json.dumps(boris_copy)
    assert blind.payload["salt"] not in json.dumps(boris_copy)
    assert blind.payload["dice_key"]["key"] not in json.dumps(boris_copy)
    assert {e["seq"] for e in alice_copy["events"] if e.get("redacted")} == {blind.seq}

    report = check_export(boris_copy)
    assert report.ok and report.redacted == 2
    assert report.sessions[0].hidden_rolls == 2
    assert report.sessions[0].proven == report.sessions[0].server_rolls > 0

    rolls.reveal_check(campaign=campaign, actor=users["gm"], seq=blind.seq)
    revealed = export_campaign(campaign, membership=member(campaign, users["boris"]))
    assert {e["seq"] for e in revealed["events"] if e.get("redacted")} == {private.seq}
    report = check_export(revealed)  # the revealed roll's salt and key now verify it
    assert report.ok and report.sessions[0].hidden_rolls == 1
    assert report.sessions[0].proven == report.sessions[0].server_rolls


def test_a_redacted_event_can_hide_nothing_from_the_chain(play, users):
    """A redacted event's hash is checked against its sealed document, and it links the next."""
    campaign = play("d6pool")
    document = export_campaign(campaign, membership=member(campaign, users["boris"]))
    index = next(i for i, e in enumerate(document["events"]) if e.get("redacted"))
    document["events"][index]["hash"] = "f" * 64
    first, second = check_export(document).problems
    assert first.seq == document["events"][index]["seq"] and "hash mismatch" in first.what
    assert second.seq == document["events"][index + 1]["seq"]
    assert "prev_hash does not link" in second.what


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_checks_csv_has_a_row_per_check_with_dice_faces_and_outcome(play, users):
    campaign = play("d6pool")
    table = rows(checks_csv(campaign))
    checks = list(Check.objects.filter(campaign=campaign).order_by("seq"))
    assert list(table[0]) == list(CSV_COLUMNS)
    assert [int(row["seq"]) for row in table] == [c.seq for c in checks]
    by_seq = {int(row["seq"]): row for row in table}
    manual = next(c for c in checks if c.manual)
    assert by_seq[manual.seq]["dice"] == "manual" and by_seq[manual.seq]["faces"] == "4 1"
    contest = next(c for c in checks if c.kind == "contest")
    row = by_seq[contest.seq]
    assert row["character"] == "Hero vs Foe" and row["session"] == "1"
    assert row["faces"] == " | ".join(" ".join(map(str, r["faces"])) for r in contest.data["rolls"])
    assert row["actor"] == "gm" and row["dice"] == "server" and row["outcome"] == contest.outcome
    assert "contest: " in row["summary"]


def test_the_csv_leaves_out_hidden_rolls_and_defuses_formulas(play, users):
    campaign = play("nice_damnit")
    evil = services.create_character(
        campaign=campaign,
        actor=users["boris"],
        name='=HYPERLINK("http://x")',
        traits={"areas": {"Firearms": 1}},
    )
    services.start_session(campaign=campaign, actor=users["gm"])
    rolls.check_roll(
        campaign=campaign, actor=users["boris"], request={"character": str(evil.pk), "pool": 1}
    )
    everything = rows(checks_csv(campaign))
    assert everything[-1]["character"] == '\'=HYPERLINK("http://x")'
    for_boris = rows(checks_csv(campaign, membership=member(campaign, users["boris"])))
    hidden = {"for my eyes", "the GM's secret"}
    assert len(for_boris) == len(everything) - 2
    assert not any(label in row["summary"] for row in for_boris for label in hidden)
