"""Witnesses (issue #16, issue #14 item 5): a client that kept the last (seq, hash) it saw and
reconnects with ``after=<seq>:<hash>`` is told, with a frame of its own, when the log no longer
holds that history: a restored older backup, or an event rewritten with the chain re-hashed."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.core.management import call_command
from django.db import connection

from campaign.models import Campaign
from eventlog import append_only
from eventlog.chain import canonical_json, document_hash
from eventlog.models import Event
from rolls.checks import services
from rolls.trust.stored_log import event_rows
from tests.eventlog.forgery import payload_column
from tests.live.conftest import head_of, in_db

pytestmark = pytest.mark.django_db(transaction=True)


def hash_at(campaign_id: int, seq: int) -> str:
    return Event.objects.get(campaign_id=campaign_id, seq=seq).hash


def _raw(statements: list[tuple[str, list]]) -> None:
    """What someone with the database's superuser can do behind the triggers' back."""
    append_only.drop(connection)
    try:
        with connection.cursor() as cursor:
            for statement, params in statements:
                cursor.execute(statement, params)
    finally:
        append_only.install(connection)


def restore_older_backup(campaign_id: int, keep: int) -> None:
    """The log as a backup taken at `keep` has it: later events gone, the head moved back."""
    head = Event.objects.get(campaign_id=campaign_id, seq=keep).hash
    _raw(
        [
            ("DELETE FROM campaign_event WHERE campaign_id = %s AND seq > %s", [campaign_id, keep]),
            (
                "UPDATE campaign_campaign SET head_seq = %s, head_hash = %s WHERE id = %s",
                [keep, head, campaign_id],
            ),
        ]
    )
    call_command("rebuild_projections", campaign=[campaign_id])  # the backup's read models


def _turn_blind(row: dict) -> None:
    row["visibility"] = "blind"
    row["payload"] = {**row["payload"], "salt": "ab" * 16}


def rewrite_and_rehash(campaign_id: int, seq: int, change: Callable[[dict], None] = _turn_blind):
    """An attacker edits event `seq` (``change`` edits its row: by default a public roll turned
    blind) and re-hashes everything after it, so that the stored log verifies on its own."""
    rows = list(event_rows(campaign_id))
    prev = rows[seq - 2]["hash"]
    statements = []
    for row in rows[seq - 1 :]:
        if row["seq"] == seq:
            change(row)
        row["prev_hash"] = prev
        row["hash"] = prev = document_hash(row)
        statements.append(
            (
                f"UPDATE campaign_event SET visibility = %s, {payload_column()} = %s, "
                "prev_hash = %s, hash = %s WHERE campaign_id = %s AND seq = %s",
                [
                    row["visibility"],
                    canonical_json(row["payload"]),
                    row["prev_hash"],
                    row["hash"],
                    campaign_id,
                    row["seq"],
                ],
            )
        )
    statements.append(
        ("UPDATE campaign_campaign SET head_hash = %s WHERE id = %s", [prev, campaign_id])
    )
    _raw(statements)


def roll_now(table, name: str) -> int:
    actor, request = table.users[name], table.roll(name)
    return services.check_roll(campaign=table.campaign, actor=actor, request=request).seq


async def test_a_witness_that_holds_resumes_and_the_events_link_to_it(server, table, feeds):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    seen = alice.frames[-1]["head"]
    witness = await in_db(hash_at, table.id, seen)
    await alice.close()
    await in_db(roll_now, table, "boris")
    alice = await feeds.open(server.url(table.id, after=f"{seen}:{witness}"), table.tokens["alice"])
    assert alice.others("caught_up") == []
    assert alice.events[0]["seq"] == seen + 1 and alice.events[0]["prev_hash"] == witness


async def test_a_restored_older_backup_is_noticed_by_a_returning_client(server, table, feeds):
    """Issue #14's case: a page at 38 came back to a log restored to 18 that had grown again;
    `after=38` alone would have skipped the new 19..38 silently."""
    gm = await feeds.open(server.url(table.id), table.tokens["gm"])
    backup_at = gm.frames[-1]["head"]
    for _ in range(3):
        await in_db(roll_now, table, "alice")
    seen = await in_db(head_of, table.id)
    witness = await in_db(hash_at, table.id, seen)
    await gm.close()

    await in_db(restore_older_backup, table.id, backup_at)
    for _ in range(4):  # the table plays on: seqs are reused with other events
        await in_db(roll_now, table, "boris")
    assert await in_db(head_of, table.id) > seen

    gm = await feeds.open(server.url(table.id, after=f"{seen}:{witness}"), table.tokens["gm"])
    (changed,) = gm.others("caught_up")
    assert changed["type"] == "history_changed" and changed["seq"] == seen
    assert changed["hash"] == witness and "no longer holds" in changed["message"]
    assert gm.events == [], "the old history is not continued: the client starts afresh"
    assert gm.frames[-1] == {"type": "caught_up", "head": await in_db(head_of, table.id)}


async def test_a_log_restored_behind_the_witness_is_noticed_too(server, table, feeds):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    backup_at = alice.frames[-1]["head"]
    await alice.close()
    seen = await in_db(roll_now, table, "alice")
    witness = await in_db(hash_at, table.id, seen)
    await in_db(restore_older_backup, table.id, backup_at)
    alice = await feeds.open(server.url(table.id, after=f"{seen}:{witness}"), table.tokens["alice"])
    assert [f["type"] for f in alice.others("caught_up")] == ["history_changed"]


async def test_a_rehashed_rewrite_is_caught_by_a_witness(server, table, feeds):
    boris = await feeds.open(server.url(table.id), table.tokens["boris"])
    target = await in_db(roll_now, table, "alice")
    await in_db(roll_now, table, "gm")
    await boris.command("ping")  # committed outside the server: the ping catches up
    assert boris.seqs[-1] == target + 1
    seen = boris.events[-1]["seq"]
    witness = boris.events[-1]["hash"]  # what the page keeps in localStorage
    await boris.close()

    await in_db(rewrite_and_rehash, table.id, target)
    campaign = await in_db(Campaign.objects.get, pk=table.id)
    assert campaign.head_hash != witness
    boris = await feeds.open(server.url(table.id, after=f"{seen}:{witness}"), table.tokens["boris"])
    assert [f["type"] for f in boris.others("caught_up")] == ["history_changed"]

    error = await boris.command("resume", after=seen, hash="xyz")
    assert (error["type"], error["field"]) == ("error", "hash")
    changed = await boris.command("resume", after=seen, hash=witness)
    assert changed["type"] == "history_changed"


async def test_a_malformed_witness_is_an_error_naming_after(server, table, feeds):
    alice = await feeds.open(server.url(table.id, after="3:nothex"), table.tokens["alice"])
    (error,) = alice.others("caught_up")
    assert (error["type"], error["field"]) == ("error", "after")
