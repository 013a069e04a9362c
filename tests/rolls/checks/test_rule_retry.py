"""Retries: Storyteller escalation (RULES 2.8, A.2) and the CofD retry penalty (RULES 3.6), with
the truthful explanation of item 12 and the open cases the README decides."""

from __future__ import annotations

import random

import pytest

from campaign import services
from rolls.systems import storyteller
from tests.rolls.checks.conftest import first_roll
from tests.rolls.checks.rulebook import refused_roll

FAIL7 = [2] * 7  # Physical 3 + Lockpicking 4
LOCK = {"traits": ["Physical", "Lockpicking"], "task": "the vault"}


def _fail(t, who="alice", **extra):
    return first_roll(t.roll(who, faces=FAIL7, **{**LOCK, **extra}))


def test_storyteller_explains_the_rules_raise_and_the_cap(table):
    t = table("storyteller", retry_escalation="seed")
    rolls = [_fail(t) for _ in range(4)]
    fourth = rolls[3]
    assert fourth["check"]["difficulty"] == 10
    assert fourth["rules"]["retry"] == {
        "attempt": 4,
        "base_difficulty": 6,
        "raise": 6,  # "attempt 4: +6, difficulty capped at 10" (not "+4")
        "uncapped": 12,
        "difficulty": 10,
        "capped": True,
    }
    for roll in rolls:  # no retry term in the dice sum ("3 + 4 + retry 1 = 7 dice")
        assert [line["kind"] for line in roll["breakdown"]] == ["attributes", "abilities"]
        assert sum(line["value"] for line in roll["breakdown"]) == roll["check"]["pool"]
    assert rolls[1]["rules"]["retry"]["raise"] == 1 and not rolls[1]["rules"]["retry"]["capped"]
    assert "retry" not in rolls[0]["rules"], "a first attempt has nothing to explain"


def test_automatic_success_must_reach_the_uncapped_escalated_difficulty(table):
    """README decision: past 10, the clamp only keeps a 10 succeeding; an automatic success
    still needs a pool of the escalated difficulty (attempt 4, seed, base 6: 12 dice)."""
    t = table("storyteller")
    for _ in range(3):
        _fail(t)
    refused_roll(t, "alice", 400, "automatic", automatic=True, faces=[], **LOCK)
    ten = {**LOCK, "pool": 3}  # 10 dice reach the clamped 10 but not the escalated 12
    refused_roll(t, "alice", 400, "automatic", automatic=True, faces=[], **ten)
    big = t.roll("alice", automatic=True, faces=[], pool=5, **LOCK)  # 7 + 5 = 12 ≥ 12
    assert (big["outcome"], first_roll(big)["result"]["successes"]) == ("success", 1)


def test_a_not_escalating_failure_is_not_an_attempt(table):
    """README decision: a check the GM marks as not escalating neither counts as a failed
    attempt nor escalates; its success still ends the task."""
    t = table("storyteller")
    alice = str(t.characters["alice"].pk)
    _fail(t)
    shot = first_roll(t.roll("gm", character=alice, not_escalating=True, faces=FAIL7, **LOCK))
    assert shot["check"]["difficulty"] == 6 and shot["rules"]["not_escalating"] is True
    assert t.get("gm", "state/")["retries"][0]["failures"] == 1
    assert _fail(t)["rules"]["attempt"] == 2


def test_retry_counters_persist_across_sessions_until_success_or_reset(table, users):
    t = table("storyteller")
    _fail(t)
    services.end_session(campaign=t.campaign, actor=users["gm"])
    services.start_session(campaign=t.campaign, actor=users["gm"])
    assert _fail(t)["rules"]["attempt"] == 2
    services.end_chapter(campaign=t.campaign, actor=users["gm"])
    services.start_chapter(campaign=t.campaign, actor=users["gm"])
    assert _fail(t)["rules"]["attempt"] == 3


def test_task_names_match_whatever_their_case_and_spacing(table):
    t = table("storyteller")
    _fail(t, task="The Vault")
    assert _fail(t, task="  the   vault ")["rules"]["attempt"] == 2
    assert _fail(t, task="THE VAULT")["rules"]["attempt"] == 3
    assert [r["failures"] for r in t.get("gm", "state/")["retries"]] == [3]
    body = {"character": str(t.characters["alice"].pk), "task": "the VAULT"}
    t.post("gm", "tasks/reset/", body, expect=204)
    assert _fail(t, task="the vault")["rules"]["attempt"] == 1


def test_cofd_retry_line_shows_the_rule_and_the_cap(table):
    t = table("cofd")
    ritual = {"traits": ["Wits", "Occult"], "task": "ritual", "under_pressure": True}
    for attempt in range(1, 9):  # eight failures: attempt 9 has retry -8
        t.roll("alice", faces=[2] * max(5 - min(attempt - 1, 5), 1), **ritual)
    ninth = first_roll(t.roll("alice", faces=[2], **ritual))  # 5 - 5 = 0: a chance die
    retry = next(line for line in ninth["breakdown"] if line["kind"] == "retry")
    assert (retry["value"], retry["raw"], retry["cap"]) == (-5, -8, 5)  # "retry -8, capped at -5"
    assert ninth["rules"]["retry_penalty"] == -8
    assert sum(line["value"] for line in ninth["breakdown"]) == ninth["check"]["pool"] == 0


def test_cofd_capped_player_groups_are_one_truthful_line(table):
    t = table("cofd")
    check = t.roll(
        "alice",
        traits=["Strength", "Brawl"],
        modifiers=[{"group": "equipment", "value": 4}, {"group": "equipment", "value": 3}],
        faces=[2] * 10,
    )
    roll = first_roll(check)
    equipment = [line for line in roll["breakdown"] if line["kind"] == "equipment"]
    assert [(e["value"], e["raw"], e["cap"]) for e in equipment] == [(5, 7, 5)]
    assert sum(line["value"] for line in roll["breakdown"]) == roll["check"]["pool"] == 10


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("mode", ["seed", "linear", "off"])
def test_seeded_storyteller_retry_sequences(table, users, seed, mode):
    rng = random.Random(seed)
    t = table("storyteller", retry_escalation=mode)
    failures = {"alice": 0, "boris": 0}
    for _ in range(25):
        who = rng.choice(["alice", "boris"])
        if rng.random() < 0.1:
            services.end_session(campaign=t.campaign, actor=users["gm"])
            services.start_session(campaign=t.campaign, actor=users["gm"])
        succeed = rng.random() < 0.3
        roll = first_roll(t.roll(who, stressful=True, faces=[10] * 7 if succeed else FAIL7, **LOCK))
        attempt = failures[who] + 1
        assert roll["rules"]["attempt"] == attempt
        assert roll["check"]["difficulty"] == storyteller.retry_difficulty(6, attempt, mode)
        failures[who] = 0 if succeed else failures[who] + 1
        retries = {r["character"]: r["failures"] for r in t.get("gm", "state/")["retries"]}
        expected = {str(t.characters[w].pk): n for w, n in failures.items() if n}
        assert retries == expected


def test_task_names_match_whatever_their_width_and_invisible_characters(table):
    """A name that looks the same on the GM's panel is the same task: fullwidth letters, a
    zero-width space or a word joiner start no counter of their own (attempt 1, no penalty)."""
    t = table("storyteller")
    _fail(t, task="the vault")
    fullwidth = "".join(chr(ord(c) + 0xFEE0) if c != " " else c for c in "the vault")
    spellings = (fullwidth, "the vault\u200b", "\u2060the vault")
    for attempt, spelling in enumerate(spellings, 2):
        assert _fail(t, task=spelling)["rules"]["attempt"] == attempt, spelling
    assert [r["failures"] for r in t.get("gm", "state/")["retries"]] == [4]


def test_the_gms_not_escalating_holds_for_every_action_of_a_declaration(table):
    """A multiple-action declaration the GM marks not escalating: no action is raised by the
    failed attempt before it, and its failure is not an attempt."""
    t = table("storyteller")
    alice = str(t.characters["alice"].pk)
    _fail(t)
    check = t.roll(
        "gm",
        character=alice,
        not_escalating=True,
        actions=[{"traits": ["Physical", "Brawl"]}, {"traits": ["Physical", "Dodge"]}],
        faces=[[2, 2, 2, 2, 2], [2, 2, 2]],
        **LOCK,
    )
    assert [roll["check"]["difficulty"] for roll in check["data"]["rolls"]] == [6, 6]
    assert all(roll["rules"]["not_escalating"] for roll in check["data"]["rolls"])
    assert t.get("gm", "state/")["retries"][0]["failures"] == 1


def test_counters_kept_under_the_old_key_are_counted_again_by_the_migration(table):
    """A counter stored before task_key folded invisible and decomposed characters (a Mac
    keyboard's «й» is и + a combining breve) is counted again from the log by the migration,
    so the next attempt is still a retry and a rebuild finds the same counters."""
    import importlib

    from django.apps import apps

    from rolls.models import TaskAttempts
    from tests.eventlog.tables import assert_rebuild_equals_live

    migration = importlib.import_module("rolls.migrations.0008_task_counters_rekeyed")
    t = table("storyteller")
    typed, decomposed = "взлом двери й", "взлом двери \u0438\u0306"
    _fail(t, task=typed)
    _fail(t, task=decomposed)  # the same task now: attempt 2
    counter = TaskAttempts.objects.get()
    assert counter.failures == 2
    # As the old key left it: two counters, the decomposed spelling's apart.
    counter.failures = 1
    counter.save()
    TaskAttempts.objects.create(
        campaign=t.campaign, character_id=counter.character_id, task=decomposed, failures=1
    )
    migration.rekey(apps, None)
    assert [(c.task, c.failures) for c in TaskAttempts.objects.all()] == [(typed, 2)]
    assert _fail(t, task=decomposed)["rules"]["attempt"] == 3
    assert_rebuild_equals_live(t.campaign.pk)


def test_the_migration_ends_a_count_a_success_under_another_spelling_ended(table):
    """Found by a review: a counter whose own key is still current can be wrong too (failures
    at "the vault", then a success at "the vault" with a zero-width space, which the old key
    counted apart): the migration trusts no counter, and counts them all from the log."""
    import importlib

    from django.apps import apps

    from rolls.models import TaskAttempts
    from tests.eventlog.tables import assert_rebuild_equals_live

    migration = importlib.import_module("rolls.migrations.0008_task_counters_rekeyed")
    t = table("storyteller")
    _fail(t)
    _fail(t)
    t.roll("alice", faces=[8, 9, 10, 8, 9, 10, 8], **{**LOCK, "task": "the vault\u200b"})
    assert not TaskAttempts.objects.exists()  # the same task now: the success ended it
    character = t.characters["alice"].pk
    TaskAttempts.objects.create(
        campaign=t.campaign, character_id=character, task="the vault", failures=2
    )  # as the old key left it
    migration.rekey(apps, None)
    assert not TaskAttempts.objects.exists()
    assert _fail(t)["rules"]["attempt"] == 1
    assert_rebuild_equals_live(t.campaign.pk)


def test_a_task_whose_key_is_longer_than_its_name_is_counted(table):
    """ "ß" keys as "ss" and "…" as "...": a 120-character name keys longer than 120, which the
    counter keeps whole (it was a 500 on PostgreSQL, its column 120 characters)."""
    t = table("storyteller")
    for name in ("ß" * 120, "x" * 115 + "…" * 5):
        _fail(t, task=name)
        assert _fail(t, task=name)["rules"]["attempt"] == 2, name
