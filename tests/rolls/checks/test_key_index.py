"""Each check's roll key is the session's next one: found from the session's last check (its
key's index plus one), never by counting the session's checks; a new session starts at key 0,
and rows written before the index was kept get it from their event (migration rolls.0007)."""

from __future__ import annotations

import importlib

from django.db import connection

from campaign import services
from eventlog.models import Event
from rolls.models import Check

backfill = importlib.import_module("rolls.migrations.0007_check_key_index").backfill


class _Editor:
    """What the migration's function uses of a schema editor (SQLite's refuses to open inside
    the test's transaction)."""

    connection = connection

    def execute(self, sql: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(sql)


def _indices(campaign) -> list[tuple[int, int, int | None]]:
    """(seq, the payload's key index, the row's) for each check of ``campaign``."""
    events = {
        e.seq: e.payload["dice_key"]["index"]
        for e in Event.objects.filter(campaign=campaign, type="check.rolled")
    }
    return [
        (seq, events[seq], key_index)
        for seq, key_index in Check.objects.filter(campaign=campaign)
        .order_by("seq")
        .values_list("seq", "key_index")
    ]


def test_keys_follow_on_within_a_session_and_start_again_in_the_next(table, users):
    play = table("cofd", manual=False)
    for _ in range(3):
        play.roll("alice", traits=["Wits", "Occult"])
    play.roll("boris", traits=["Wits"], visibility="blind")  # hidden rolls use keys too
    services.end_session(campaign=play.campaign, actor=users["gm"])
    services.start_session(campaign=play.campaign, actor=users["gm"], title="Saturday")
    play.roll("alice", traits=["Wits", "Occult"])
    play.roll("alice", traits=["Wits", "Occult"])
    indices = _indices(play.campaign)
    assert [payload for _, payload, _ in indices] == [0, 1, 2, 3, 0, 1]
    assert all(payload == row for _, payload, row in indices)


def test_rows_without_a_key_index_get_it_from_their_event(table):
    play = table("storyteller", manual=False)
    for _ in range(3):
        play.roll("alice", traits=["Physical", "Brawl"])
    Check.objects.filter(campaign=play.campaign).update(key_index=None)
    backfill(None, _Editor())
    assert [row for _, _, row in _indices(play.campaign)] == [0, 1, 2]
    # And the next roll follows on from them.
    play.roll("alice", traits=["Physical", "Brawl"])
    assert [row for _, _, row in _indices(play.campaign)] == [0, 1, 2, 3]


def test_a_last_check_written_without_its_index_does_not_restart_the_keys(table):
    """A check row without its key index (written by a process still on the code before the
    index was kept) is counted instead: the next roll still takes the session's next key."""
    play = table("storyteller", manual=False)
    for _ in range(3):
        play.roll("alice", traits=["Physical", "Brawl"])
    last = Check.objects.filter(campaign=play.campaign).order_by("-seq").first()
    Check.objects.filter(pk=last.pk).update(key_index=None)
    play.roll("alice", traits=["Physical", "Brawl"])
    assert [payload for _, payload, _ in _indices(play.campaign)] == [0, 1, 2, 3]
    Check.objects.filter(pk=last.pk).update(key_index=2)  # as a rebuild writes it (teardown)
