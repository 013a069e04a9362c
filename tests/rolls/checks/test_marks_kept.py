"""A check row keeps its roll's dice marks and terms as rolled (`Check.marks_json`), the JSON text
a catch-up splices into the roll's event instead of decoding its payload (#17): written with the
row and by a rebuild alike (the `table` fixture compares the two), and for rows written before
it was kept by migration rolls.0009."""

from __future__ import annotations

import importlib
import json

from django.apps import apps

from eventlog.models import Event
from rolls.models import Check
from rolls.reads.present import marks_of, terms_of
from tests.rolls.checks.test_key_index import _Editor

migration = importlib.import_module("rolls.migrations.0009_check_marks_json")


def _kept(campaign) -> list[tuple[dict, dict]]:
    """(what the roll's event gives, what its row keeps) for each check of ``campaign``."""
    rolled = Event.objects.filter(campaign=campaign, type="check.rolled")
    events = {event.seq: event.payload for event in rolled}
    return [
        (
            {
                "dice_marks": marks_of(system, events[seq]),
                "roll_terms": terms_of(system, events[seq]),
            },
            json.loads(kept),
        )
        for seq, system, kept in Check.objects.filter(campaign=campaign)
        .order_by("seq")
        .values_list("seq", "system", "marks_json")
    ]


def test_each_roll_keeps_the_marks_and_terms_its_event_gives(table):
    play = table("cofd", manual=False)
    play.roll("alice", traits=["Wits", "Occult"])
    play.roll("alice", traits=["Wits"], pool=-3)  # a chance die
    play.roll("boris", traits=["Wits"], visibility="blind")
    kept = _kept(play.campaign)
    assert len(kept) == 3 and all(given == row for given, row in kept)
    assert kept[1][1]["roll_terms"] == [[{"term": "chance_die"}]]


def test_rows_written_before_get_them_from_their_event(table, monkeypatch):
    play = table("storyteller", manual=False)
    for _ in range(5):
        play.roll("alice", traits=["Physical", "Brawl"])
    Check.objects.filter(campaign=play.campaign).update(marks_json="")
    monkeypatch.setattr(migration, "BATCH", 2)  # a batch at a time: three here
    migration.backfill(apps, _Editor())
    kept = _kept(play.campaign)
    assert len(kept) == 5 and all(given == row for given, row in kept)
