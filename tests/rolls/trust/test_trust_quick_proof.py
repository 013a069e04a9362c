"""The full proof's quick ways (issue #16's speed): a roll's faces matched against its key's
stream and its result resolved once per distinct (check, faces); the stored canonical text hashed
and decoded once. Each gives the answer the long way gives: nothing tampered slips through."""

from __future__ import annotations

import copy

import pytest

from campaign import services
from eventlog.chain import canonical_json, document_hash
from eventlog.models import Event
from rolls.models import VerificationCheckpoint, VerifiedSession
from rolls.trust.stored_log import _one_payload_copy, chain_intact, event_rows, verify_campaigns
from rolls.trust.verify import StreamVerifier
from tests.eventlog.forgery import payload_column
from tests.eventlog.tables import assert_rebuild_equals_live
from tests.live.test_live_witness import _raw
from tests.rolls.trust.conftest import TRAITS, roll


def _verify(campaign_id: int, events: list[dict]) -> list[str]:
    verifier = StreamVerifier(campaign_id)
    for event in events:
        verifier.feed(event)
    return [str(problem) for problem in verifier.finish().problems]


def _rehashed(events: list[dict], start: int) -> None:
    """The forger's finish: every hash from ``start`` on recomputed and relinked."""
    for event in events[start:]:
        event["prev_hash"] = events[events.index(event) - 1]["hash"]
        event["hash"] = document_hash(event)


def _same_roll_twice(campaign, users) -> tuple[list[dict], int, int]:
    """An AGE log (3d6: few distinct faces) with two server rolls of the same check and faces;
    their indexes in the log."""
    hero = campaign.characters.get(name="Hero")
    services.start_session(campaign=campaign, actor=users["gm"])
    seen: dict[tuple, int] = {}
    for _ in range(120):  # 216 kinds of 3d6: a pair comes within a few dozen rolls
        roll(campaign, users["alice"], character=str(hero.pk), **TRAITS["age"])
        events = list(event_rows(campaign.pk))
        last = len(events) - 1
        faces = tuple(events[last]["payload"]["rolls"][0]["faces"])
        if faces in seen:
            return events, seen[faces], last
        seen[faces] = last
    raise AssertionError("no two rolls of the same faces")


def test_a_result_resolved_before_is_still_checked_against_each_rolls_record(play, users):
    """The second roll of the same check and faces finds its resolution cached: a forged result
    there (the chain re-hashed) is named all the same, as the long way names it."""
    campaign = play("age")
    events, first, second = _same_roll_twice(campaign, users)
    rolled = [events[i]["payload"]["rolls"][0] for i in (first, second)]
    assert rolled[0]["check"] == rolled[1]["check"]  # the second finds the first's resolution
    assert _verify(campaign.pk, events) == []
    forged = copy.deepcopy(events)
    result = forged[second]["payload"]["rolls"][0]["result"]
    result["total"] += 1
    _rehashed(forged, second)
    problems = _verify(campaign.pk, forged)
    seq = forged[second]["seq"]
    assert problems == [
        f"campaign {campaign.pk}, event #{seq} (check.rolled): roll 1: the result does not "
        f"follow from the faces: total is {result['total']}, the faces give {result['total'] - 1}"
    ]


def test_a_face_stored_as_true_is_not_taken_for_a_one(play, users):
    """JSON's true equals 1 in Python: the quick way leaves such a roll to the long way, which
    rolls it again and names the face."""
    for _ in range(10):  # server dice: a session without a 1 (about one in 15) is played again
        campaign = play("age")
        events = list(event_rows(campaign.pk))
        found = next(
            (
                (i, faces.index(1))
                for i, event in enumerate(events)
                if event["type"] == "check.rolled" and event["payload"]["dice"] == "server"
                for faces in [event["payload"]["rolls"][0]["faces"]]
                if 1 in faces
            ),
            None,
        )
        if found is not None:
            break
    index, position = found
    forged = copy.deepcopy(events)
    forged[index]["payload"]["rolls"][0]["faces"][position] = True
    _rehashed(forged, index)
    problems = _verify(campaign.pk, forged)
    assert any(f"#{forged[index]['seq']} (check.rolled)" in p for p in problems), problems


@pytest.mark.postgres
def test_the_proof_reads_one_payload_copy_only_while_the_jsonb_is_generated_from_it(play):
    """PostgreSQL: the jsonb payload is generated from the canonical text (eventlog.0007), so the
    proof hashes and decodes the text alone. With the expression taken away (how an owner edits
    one copy), the catalog no longer vouches for it: the proof compares them again."""
    campaign = play("cofd")
    assert _one_payload_copy()
    assert not verify_campaigns(fresh=True).problems
    _raw(
        [
            ("SET CONSTRAINTS ALL IMMEDIATE", []),
            ("ALTER TABLE campaign_event ALTER COLUMN payload DROP EXPRESSION", []),
        ]
    )
    assert not _one_payload_copy()
    assert not verify_campaigns(fresh=True).problems  # the long way, same answer
    assert campaign.head_seq


@pytest.mark.postgres
@pytest.mark.parametrize(
    "change",
    [
        (  # generated, but not from the text alone
            "ALTER TABLE campaign_event DROP COLUMN payload, ADD COLUMN payload jsonb NOT NULL "
            'GENERATED ALWAYS AS (payload_text::jsonb || \'{"label": "edited"}\') STORED'
        ),
        # a table whose rows are read with the log's, under an expression of its own
        "CREATE TABLE campaign_event_more () INHERITS (campaign_event)",
    ],
)
def test_only_the_log_s_own_expression_vouches_for_one_payload_copy(play, change):
    """The catalog vouches for one copy only for the expression `payload_text::jsonb` on the
    log's own table: another expression, or a table inheriting from the log's, and the proof
    compares the copies again (and finds what the other expression made)."""
    play("cofd")
    _raw([("SET CONSTRAINTS ALL IMMEDIATE", []), (change, [])])
    assert not _one_payload_copy()
    problems = verify_campaigns(fresh=True).problems
    assert bool(problems) == ("DROP COLUMN" in change), problems


@pytest.mark.parametrize("visibility", ["private", "blind"])
def test_the_fast_chain_catches_an_edited_hidden_event(play, visibility):
    """A hidden event's sealed document is hashed from its stored text too: an edit of its
    payload, or of the column that says who may see it, breaks the chain."""
    campaign = play("cofd")
    head = {"until": campaign.head_seq, "head_hash": campaign.head_hash}
    assert chain_intact(campaign.pk, **head)
    event = Event.objects.filter(campaign=campaign, visibility=visibility).first()

    def store(payload: dict) -> None:
        statement = f"UPDATE campaign_event SET {payload_column()} = %s WHERE id = %s"
        _raw([(statement, [canonical_json(payload), event.pk])])

    store({**event.payload, "label": "edited"})
    assert not chain_intact(campaign.pk, **head)
    store(event.payload)
    assert chain_intact(campaign.pk, **head)
    _raw([("UPDATE campaign_event SET visibility = 'public' WHERE id = %s", [event.pk])])
    assert not chain_intact(campaign.pk, **head)


@pytest.mark.postgres
def test_a_row_without_its_canonical_text_is_hashed_the_long_way(play):
    """Rows whose text is gone (the owner made the jsonb a plain column and emptied the text, as
    before Event.payload_text) still hash, re-encoded from the jsonb."""
    campaign = play("age")
    _raw(
        [
            ("SET CONSTRAINTS ALL IMMEDIATE", []),
            (
                "ALTER TABLE campaign_event ALTER COLUMN payload DROP EXPRESSION, "
                "ALTER COLUMN payload_text DROP NOT NULL",
                [],
            ),
            ("UPDATE campaign_event SET payload_text = NULL WHERE campaign_id = %s", [campaign.pk]),
        ]
    )
    assert chain_intact(campaign.pk, until=campaign.head_seq, head_hash=campaign.head_hash)
    assert not verify_campaigns(fresh=True).problems
    assert_rebuild_equals_live(campaign.pk)  # the replay hashes them the long way too


def test_closed_sessions_are_kept_beside_the_checkpoint_and_reported_in_full(play, users):
    """The checkpoint holds only the open session; the closed ones' summaries are rows of their
    own, read back for a report: the same lines as a fresh proof's."""
    campaign = play("cofd")
    hero = campaign.characters.get(name="Hero")
    for _ in range(2):
        services.start_session(campaign=campaign, actor=users["gm"])
        roll(campaign, users["alice"], character=str(hero.pk), **TRAITS["cofd"])
        services.end_session(campaign=campaign, actor=users["gm"])
    services.start_session(campaign=campaign, actor=users["gm"])
    verify_campaigns()
    state = VerificationCheckpoint.objects.get(campaign=campaign).state
    assert (state["sessions_before"], len(state["sessions"])) == (3, 1)
    assert VerifiedSession.objects.filter(campaign=campaign).count() == 3
    roll(campaign, users["alice"], character=str(hero.pk), **TRAITS["cofd"])
    carried = verify_campaigns()
    assert carried.lines == verify_campaigns(fresh=True).lines
    assert [row["number"] for row in carried.sessions] == [1, 2, 3, 4]
