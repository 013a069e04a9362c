"""A rebuild writes every read model of play exactly as the live projectors did, byte for byte
(tests.eventlog.tables compares every column of every table; the `table` fixture does it again
after each test of this package): all five systems, hidden rolls and their reveal, Willpower,
Fortune, Beats, Nice! chips, task attempts and their reset, calls answered and closed."""

from __future__ import annotations

import threading
import time
import traceback

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError

from campaign import services
from eventlog import replay
from eventlog.chain import canonical_json
from eventlog.models import Event
from eventlog.recorders import recorder
from tests.eventlog.forgery import rewrite_payload
from tests.eventlog.tables import assert_rebuild_equals_live, stored_tables
from tests.rolls.checks.conftest import first_roll

pytestmark = pytest.mark.django_db

SYSTEM_ROLLS = {
    "cofd": {"traits": ["Wits", "Occult"], "faces": [9, 2, 3, 4, 5]},
    "storyteller": {"traits": ["Physical", "Lockpicking"], "faces": [7, 2, 3, 4, 5, 6, 8]},
    "d6pool": {"traits": ["Reaction"], "faces": [6, 2, 3, 5]},
    "age": {"traits": ["Dexterity"], "target": 11, "faces": [3, 3, 4]},
    "nice_damnit": {"traits": ["Firearms", "Quick draw"], "faces": [4, 4]},
}


def _table_of_hidden_rolls(t, users):
    """Public, private and blind rolls of two players and the GM; the GM reveals one."""
    roll = SYSTEM_ROLLS[t.campaign.system]
    seqs = [t.roll("alice", **roll)["seq"]]
    for visibility in ("private", "blind"):
        seqs.append(t.roll("alice", visibility=visibility, **roll)["seq"])
        seqs.append(t.roll("boris", visibility=visibility, **roll)["seq"])
    t.roll("gm", character=str(t.characters["boris"].pk), visibility="private", **roll)
    t.post("gm", f"checks/{seqs[2]}/reveal/", expect=200)
    return seqs


@pytest.mark.parametrize("system", sorted(SYSTEM_ROLLS))
def test_every_system_with_hidden_rolls_and_reveals_rebuilds_to_the_same_bytes(
    table, users, system
):
    t = table(system)
    _table_of_hidden_rolls(t, users)
    services.end_session(campaign=t.campaign, actor=users["gm"])
    tables = assert_rebuild_equals_live(t.campaign.pk)
    assert len(tables["rolls_check"]) == 6
    assert sum(row[8] for row in tables["rolls_check"]) == 1, "one reveal, rebuilt"


def test_resources_follow_ups_tasks_and_calls_rebuild_to_the_same_bytes(table, users):
    cofd = table("cofd")
    check = cofd.roll("alice", traits=["Wits"], pool=-3, faces=[3])  # a chance die: failure
    cofd.post("alice", f"checks/{check['seq']}/dramatic-failure/", expect=200)  # + a Beat
    cofd.post("gm", f"characters/{cofd.characters['alice'].pk}/willpower/", {"amount": 2})
    cofd.roll("alice", traits=["Wits"], willpower=True, faces=[8, 8, 8, 2, 1, 1])
    call = cofd.post(
        "gm",
        "calls/",
        {"characters": [str(c.pk) for c in cofd.characters.values()], "request": {"pool": 2}},
        expect=201,
    )
    cofd.roll("alice", call=call["id"], faces=[2, 3])
    cofd.roll("boris", call=call["id"], faces=[8, 3])
    assert cofd.character("alice").resources["beats"] == 1
    tables = assert_rebuild_equals_live(cofd.campaign.pk)
    assert tables["rolls_checkcall"][0][-1] is True or tables["rolls_checkcall"][0][-1] == 1

    storyteller = table("storyteller")
    fail = {"traits": ["Physical", "Lockpicking"], "task": "The  Vault", "faces": [2] * 7}
    storyteller.roll("alice", **fail)
    storyteller.roll("alice", **fail)
    storyteller.roll("boris", **{**fail, "task": "the window"})
    body = {"character": str(storyteller.characters["boris"].pk), "task": "the window"}
    storyteller.post("gm", "tasks/reset/", body, expect=204)
    storyteller.roll("alice", traits=["Mental"], pool=1, faces=[1, 3, 5])  # the free botch
    tables = assert_rebuild_equals_live(storyteller.campaign.pk)
    assert [row[-1] for row in tables["rolls_taskattempts"]] == [2]

    age = table("age")
    rolled = age.roll("alice", traits=["Dexterity"], target=13, faces=[3, 3, 4])
    age.post("alice", f"checks/{rolled['seq']}/fortune/", {"die": 0, "value": 6}, expect=200)
    assert age.character("alice").resources["fortune"] < 6
    assert_rebuild_equals_live(age.campaign.pk)

    nice = table("nice_damnit")
    chips = nice.roll("alice", traits=["Firearms", "Quick draw"], faces=[4, 4])
    taken = nice.post("alice", f"checks/{chips['seq']}/extra-nice/", {"count": 2}, expect=200)
    assert first_roll(taken)["result"]["nice"] == 3
    assert_rebuild_equals_live(nice.campaign.pk)


def test_a_follow_up_of_a_check_older_than_the_window_is_read_back(table, users, monkeypatch):
    """A rebuild keeps only the latest checks in memory: changing an older one reads it back and
    writes it with an UPDATE, to the same bytes."""
    monkeypatch.setattr(replay, "WINDOW", 4)
    t = table("cofd")
    old = t.roll("alice", traits=["Wits"], pool=-3, faces=[3], visibility="private")
    t.post("gm", f"checks/{old['seq']}/reveal/", expect=200)
    hidden = t.roll("boris", visibility="private", **SYSTEM_ROLLS["cofd"])
    for _ in range(9):
        t.roll("alice", **SYSTEM_ROLLS["cofd"])
    t.post("alice", f"checks/{old['seq']}/dramatic-failure/", expect=200)
    t.post("gm", f"checks/{hidden['seq']}/reveal/", expect=200)
    t.roll("alice", **SYSTEM_ROLLS["cofd"])
    t.post("gm", f"checks/{hidden['seq']}/reveal/", expect=409)  # already shown
    assert_rebuild_equals_live(t.campaign.pk)


def test_a_log_refused_after_the_window_slid_leaves_no_row_written(table, users, monkeypatch):
    """The checks that slide out of the window are written while the replay goes on (on
    PostgreSQL, by a thread of their own): when a later event does not verify, the rebuild is
    refused and none of them stays written, nor does a writer thread."""
    monkeypatch.setattr(replay, "WINDOW", 4)
    t = table("cofd")
    for _ in range(12):
        t.roll("alice", **SYSTEM_ROLLS["cofd"])
    forged = Event.objects.filter(campaign=t.campaign, type="check.rolled").order_by("-seq")[1]
    stored = rewrite_payload(forged.pk, canonical_json(dict(forged.payload, label="forged")))
    before = stored_tables(t.campaign.pk)
    recorder_class = type(recorder())
    copy_rows = recorder_class.copy_rows

    def slow_copy_rows(self, table, columns, rows):  # still writing when the forgery is met
        if "rolls_check" in table:
            time.sleep(0.2)
        copy_rows(self, table, columns, rows)

    with monkeypatch.context() as patched, pytest.raises(CommandError, match="not rebuilt"):
        patched.setattr(recorder_class, "copy_rows", slow_copy_rows)
        call_command("rebuild_projections", campaign=[t.campaign.pk])
    assert stored_tables(t.campaign.pk) == before
    assert not [thread for thread in threading.enumerate() if "replay-copy" in thread.name]
    # Mended, the log rebuilds to what the live projectors wrote (the fixture checks it after).
    rewrite_payload(forged.pk, stored)


@pytest.mark.postgres
def test_a_failed_write_behind_says_what_failed(table, users, monkeypatch):
    """A COPY that fails behind the replay aborts the transaction, and whatever the replay runs
    next fails with "current transaction is aborted": the error says what failed first. (The
    last batch, sent as the replay ends; the task attempts' rows, a table the replay met after
    the checks', are written next.)"""
    t = table("cofd")
    for _ in range(3):  # failures: each adds to the task's attempts
        t.roll("alice", task="the lock", traits=["Wits", "Occult"], faces=[2, 3, 4, 5, 6])
    recorder_class = type(recorder())
    copy_rows = recorder_class.copy_rows

    def failing_copy_rows(self, table, columns, rows):
        if "rolls_check" not in table:  # written after the check rows' COPY failed
            time.sleep(0.2)
            return copy_rows(self, table, columns, rows)
        with self._cursor() as cursor:
            cursor.execute("SELECT 1 / 0")

    with monkeypatch.context() as patched, pytest.raises(DatabaseError) as raised:
        patched.setattr(recorder_class, "copy_rows", failing_copy_rows)
        call_command("rebuild_projections", campaign=[t.campaign.pk])
    told = "".join(traceback.format_exception(raised.value))
    assert "division by zero" in told, told
