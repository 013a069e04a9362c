"""Tampering with an exported log: every kind of edit is detected and the event is named.

Two tamperers: a careless one edits the JSON and leaves the hashes alone (the chain catches it),
and a forger who also recomputes the whole chain and the head, as the server's operator could.
The forger is caught by what the hashes cannot fake: the key commitments, the rules, the
players' receipts.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eventlog.chain import GENESIS, document_hash
from rolls import systems
from rolls.trust.export import export_campaign
from rolls.trust.verify import Problem, Receipt, check_export

Doc = dict[str, Any]
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def exported(play) -> Doc:
    """A closed d6pool session of every kind of roll, exported."""
    return export_campaign(play("d6pool"))


@pytest.fixture
def age_export(play) -> Doc:
    return export_campaign(play("age"))


def rehash(doc: Doc) -> Doc:
    """The forger's finish: renumber, relink and rehash every event, fix receipts and the head."""
    prev = GENESIS
    for seq, event in enumerate(doc["events"], 1):
        event["seq"], event["prev_hash"] = seq, prev
        if event["type"] == "session.ended":
            event["payload"].update(final_seq=seq - 1, final_hash=prev)
        event["hash"] = prev = document_hash(event)
    doc["campaign"].update(head_seq=len(doc["events"]), head_hash=prev)
    return doc


def find(doc: Doc, type_: str = "check.rolled", **where: Any) -> dict[str, Any]:
    for event in doc["events"]:
        payload = event["payload"]
        if event["type"] == type_ and all(payload.get(k) == v for k, v in where.items()):
            return event
    raise LookupError(f"no {type_} {where}")


def server_single(doc: Doc) -> dict[str, Any]:
    return find(doc, kind="single", dice="server", label="in the open")


def problems_at(doc: Doc, event: dict[str, Any]) -> list[Problem]:
    report = check_export(doc)
    assert not report.ok, "the tampered export must not verify"
    return [p for p in report.problems if (p.seq, p.event_type) == (event["seq"], event["type"])]


def one_face_changed(event: dict[str, Any]) -> list[int]:
    roll = event["payload"]["rolls"][0]
    faces = list(roll["faces"])
    faces[0] = faces[0] % 6 + 1
    return faces


# --- the careless tamperer: edits, no rehash ---------------------------------------------------


def edit_face(doc: Doc) -> tuple[dict, str]:
    event = server_single(doc)
    event["payload"]["rolls"][0]["faces"] = one_face_changed(event)
    return event, "do not follow from its key and client seed"


def edit_outcome(doc: Doc) -> tuple[dict, str]:
    event = server_single(doc)
    result = event["payload"]["rolls"][0]["result"]
    result["outcome"] = "critical_failure" if result["outcome"] == "success" else "success"
    return event, "the result does not follow from the faces: outcome is"


def edit_payload_field(doc: Doc) -> tuple[dict, str]:
    event = server_single(doc)
    event["payload"]["label"] = "something else entirely"
    return event, "hash mismatch"


def edit_key(doc: Doc) -> tuple[dict, str]:
    event = server_single(doc)
    event["payload"]["dice_key"]["key"] = os.urandom(32).hex()
    return event, "its roll key does not match the commitment published by #"


def swap_two_events(doc: Doc) -> tuple[dict, str]:
    first = server_single(doc)
    index = doc["events"].index(first)
    events = doc["events"]
    events[index], events[index + 1] = events[index + 1], events[index]
    return events[index], "are missing or moved"


def delete_event(doc: Doc) -> tuple[dict, str]:
    first = server_single(doc)
    index = doc["events"].index(first)
    del doc["events"][index]
    return doc["events"][index], f"events {first['seq']}..{first['seq']} are missing"


@pytest.mark.parametrize(
    "edit",
    [edit_face, edit_outcome, edit_payload_field, edit_key, swap_two_events, delete_event],
    ids=lambda edit: edit.__name__,
)
def test_an_edited_export_names_the_event_and_the_mismatch(exported, edit):
    assert check_export(exported).ok
    doc = copy.deepcopy(exported)
    event, expected = edit(doc)
    named = problems_at(doc, event)
    assert any(expected in p.what for p in named), [str(p) for p in check_export(doc).problems]
    assert all(f"event #{event['seq']} ({event['type']})" in str(p) for p in named)


# --- the forger: edits and recomputes the chain -----------------------------------------------


def test_a_forged_face_with_a_consistent_result_and_chain_is_caught_by_the_key(exported):
    doc = copy.deepcopy(exported)
    event = server_single(doc)
    roll = event["payload"]["rolls"][0]
    roll["faces"] = one_face_changed(event)
    roll["result"] = systems.resolve("d6pool", roll["check"], roll["faces"])
    rehash(doc)
    (problem,) = check_export(doc).problems
    assert (problem.seq, problem.event_type) == (event["seq"], "check.rolled")
    assert f"roll 1: faces {roll['faces']} do not follow from its key and client" in problem.what


def test_a_forged_outcome_with_a_rehashed_chain_is_caught_by_the_rules(exported):
    doc = copy.deepcopy(exported)
    event = server_single(doc)
    result = event["payload"]["rolls"][0]["result"]
    was = result["outcome"]
    result["outcome"] = "critical_failure" if was == "success" else "success"
    rehash(doc)
    (problem,) = check_export(doc).problems
    assert problem.seq == event["seq"]
    assert f"outcome is {result['outcome']!r}, the faces give {was!r}" in problem.what


def test_a_forged_comparison_is_caught(exported):
    doc = copy.deepcopy(exported)
    event = find(doc, kind="contest")
    comparison = event["payload"]["comparison"]
    comparison["margin"] = comparison["margin"] + 3
    rehash(doc)
    (problem,) = check_export(doc).problems
    assert problem.seq == event["seq"] and "the comparison does not follow" in problem.what
    assert "margin is" in problem.what


def test_a_forged_follow_up_is_caught(age_export):
    doc = copy.deepcopy(age_export)
    event = find(doc, "check.fortune_spent")
    event["payload"]["result"]["total"] += 4
    event["payload"]["check"]["modifier"] = 4  # and a sneaky bonus the roll never had
    rehash(doc)
    named = problems_at(doc, event)
    assert any(
        "differs from the rolled one beyond fortune_change: modifier" in p.what for p in named
    )
    assert any("after the follow-up: the result does not follow" in p.what for p in named)


def test_a_forged_key_with_a_matching_commitment_must_still_give_the_faces(exported):
    """The forger swaps a roll's key and the commitment before it, and rehashes: the logged faces
    no longer follow (the key binds the seq and the player's client seed)."""
    doc = copy.deepcopy(exported)
    event = server_single(doc)
    key = os.urandom(32)
    event["payload"]["dice_key"]["key"] = key.hex()
    before = [e for e in doc["events"][: doc["events"].index(event)] if not e.get("redacted")]
    previous = next(e for e in reversed(before) if e["type"] in ("check.rolled", "session.started"))
    field = "next_key" if previous["type"] == "check.rolled" else "key_commitment"
    previous["payload"][field] = hashlib.sha256(key).hexdigest()
    rehash(doc)
    dice = systems.KeyedDice(
        key, doc["campaign"]["id"], event["seq"], event["payload"]["client_seed"]
    )
    roll = event["payload"]["rolls"][0]
    if systems.roll("d6pool", roll["check"], dice)[0] == roll["faces"]:
        pytest.skip("the forged key happens to give the same faces (1 in 6**n)")
    (problem,) = check_export(doc).problems
    assert problem.seq == event["seq"] and "do not follow from its key" in problem.what


@pytest.mark.parametrize("edit", [swap_two_events, delete_event], ids=lambda e: e.__name__)
def test_reordered_or_deleted_events_renumbered_and_rehashed_break_the_keys(exported, edit):
    """Faces are keyed by seq and each key by its place in the session: moving a roll breaks it."""
    doc = copy.deepcopy(exported)
    edit(doc)
    rehash(doc)
    report = check_export(doc)
    assert report.problems
    assert all(
        "do not follow from its key" in p.what or "roll key" in p.what for p in report.problems
    ), [str(p) for p in report.problems]


def test_a_rehashed_payload_edit_is_caught_by_the_receipt_a_player_kept(exported):
    ended = find(exported, "session.ended")["payload"]
    receipt = Receipt.parse(f"{ended['final_seq']}:{ended['final_hash']}")
    assert check_export(exported, receipts=[receipt]).ok
    doc = copy.deepcopy(exported)
    server_single(doc)["payload"]["label"] = "something else entirely"
    rehash(doc)
    assert check_export(doc).ok, "without a receipt a full rewrite is self-consistent"
    (problem,) = check_export(doc, receipts=[receipt]).problems
    assert problem.seq == ended["final_seq"]
    assert "history up to here changed after the receipt" in problem.what
    bare = Receipt.parse(ended["final_hash"])
    assert "has no event with it" in check_export(doc, receipts=[bare]).problems[0].what


def test_manual_rolls_cannot_smuggle_in_chosen_faces(exported):
    """Relabelling a server roll as physical dice (to escape the seed) breaks the options rule."""
    doc = copy.deepcopy(exported)
    event = server_single(doc)
    event["payload"]["dice"] = "manual"
    roll = event["payload"]["rolls"][0]
    roll["faces"] = [6] * len(roll["faces"])
    roll["result"] = systems.resolve("d6pool", roll["check"], roll["faces"])
    rehash(doc)
    (problem,) = check_export(doc).problems
    assert problem.seq == event["seq"]
    assert "is marked manual dice, but manual_dice was off" in problem.what


def test_the_command_line_reports_fail_and_exits_1(exported, tmp_path):
    doc = copy.deepcopy(exported)
    event, _ = edit_key(doc)
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(doc))
    run = subprocess.run(
        [sys.executable, "-m", "rolls.trust.verify", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert f"FAIL campaign {doc['campaign']['id']}, event #{event['seq']} (check.rolled)" in (
        run.stdout
    )
    assert "hash mismatch" in run.stdout and "does not match the commitment" in run.stdout
    assert run.stdout.rstrip().splitlines()[-1].startswith("FAIL 2 problem(s)")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    run = subprocess.run(
        [sys.executable, "-m", "rolls.trust.verify", str(broken)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and "ERROR" in run.stderr
