"""What one check costs the database: its statements, counted (#17).

A player rolls for their own character over the API (token auth, a client seed; physical dice,
so that the outcome, and with it the follow-ups offered in the answer, is always the same), on
whichever database the suite runs (SQLite by default, PostgreSQL with DATABASE_URL). The counts
are exact: a change that adds a statement to a check fails here and must say why it is needed.
The statements after COMMIT (the live broadcast, rolls/live) are bounded, not fixed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from campaign.models import Campaign, Character
from eventlog.stream import lock_stream
from rolls.checks import services
from tests.rolls.checks.test_rule_willpower import _give

# Up to and including COMMIT. On PostgreSQL the append goes with the COMMIT as one statement:
# the event's INSERT, the head's UPDATE, the check row and the key's answer are CTEs of one
# query (eventlog/commit.py); SQLite runs them one by one. On PostgreSQL one statement takes
# the lock and reads the table (eventlog/recorders/postgres.py, fetch_locked: read again only
# when the lock waited for a holder that committed); on SQLite the write transaction is the lock.
# The token's statement reads the membership of the campaign too (accounts/authentication.py).
#   token+membership+campaign · BEGIN · [lock+table · append(+check row) · COMMIT]
WITHOUT_KEY = {"postgresql": 5, "sqlite": 7}
# With a key: the token's statement reads the answer recorded for it too (none, or a replay),
# and that answer is written in the append's statement on PostgreSQL; the service takes no
# savepoint inside the key's transaction (campaign/idempotency.py, service_transaction).
#   BEGIN · token+membership+campaign+key · [lock+table · append(+check row, +answer) · COMMIT]
WITH_KEY = {"postgresql": 5, "sqlite": 8}
# From the statement that takes the stream lock to COMMIT.
UNDER_LOCK = {
    (False, "postgresql"): 3,
    (False, "sqlite"): 5,
    (True, "postgresql"): 3,
    (True, "sqlite"): 6,
}
# Round trips under the lock on PostgreSQL: the lock with the table, then the COMMIT, which
# carries the append with the check row and the key's answer (eventlog/commit.py). A writer that
# waited for the lock while another committed reads the table once more.
ROUND_TRIPS_UNDER_LOCK = 2
BROADCAST_AT_MOST = 1  # after COMMIT: the roster (rolls/live/broadcast.py, rolls/reads/present.py)


def _roll(table, users, key: str | None, entries: bool = False) -> list:
    client = APIClient(HTTP_ACCEPT_LANGUAGE="en")
    token, _ = Token.objects.get_or_create(user=users["alice"])
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    body = {
        "character": str(table.characters["alice"].pk),
        "traits": ["Wits", "Occult"],
        "client_seed": "5eed" * 8,
        "faces": [8, 9, 3, 2, 5],  # Wits 3 + Occult 2: two successes, nothing to offer after
    }
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    client.post(f"{table.url}/checks/", body, format="json", **headers)  # warm: first-use reads
    if key:
        headers = {"HTTP_IDEMPOTENCY_KEY": key + "-measured"}
    with CaptureQueriesContext(connection) as captured:
        response = client.post(f"{table.url}/checks/", body, format="json", **headers)
    assert response.status_code == 201, response.content
    if entries:
        return captured.captured_queries
    return [query["sql"] for query in captured.captured_queries]


def _split(statements: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(the request up to COMMIT, the part under the stream lock, what ran after COMMIT)."""
    commit = next(i for i, sql in enumerate(statements) if sql.upper().startswith("COMMIT"))
    lock = next(i for i, sql in enumerate(statements) if _takes_the_lock(sql))
    # After COMMIT, a process with no webhook sender asks at most every 30 s whether a campaign
    # has a webhook (webhooks/dispatch.py): a slow run meets it; it is not the check's.
    after = [sql for sql in statements[commit + 1 :] if "webhooks_webhook" not in sql]
    return statements[: commit + 1], statements[lock : commit + 1], after


def _takes_the_lock(sql: str) -> bool:
    """The first statement under the stream lock (rolls/checks/rolling.py lock_table): the table
    read with the lock on PostgreSQL (eventlog/recorders/postgres.py locked_read_sql), the table
    on SQLite (whose write transaction is the lock)."""
    return "FOR UPDATE OF cc" in sql or sql.startswith("SELECT cc.id")


def _round_trips(entries: list[dict]) -> list[str]:
    """The statements under the stream lock that each waited for the database: one sent with
    the next (`pipelined`) or with the COMMIT (`with_commit`) did not wait on its own."""
    sqls = [entry["sql"] for entry in entries]
    _, locked, _ = _split(sqls)
    start = sqls.index(locked[0])
    under = entries[start : start + len(locked)]
    return [e["sql"] for e in under if not (e.get("with_commit") or e.get("pipelined"))]


def _listing(statements: list[str]) -> str:
    return "\n".join(f"  {sql[:140]}" for sql in statements)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("key", [None, "statements-key"], ids=["no-key", "idempotency-key"])
def test_a_check_runs_a_fixed_number_of_statements(table, users, key):
    statements = _roll(table("cofd", manual=True), users, key)
    request, locked, after = _split(statements)
    vendor = connection.vendor
    expected = (WITH_KEY if key else WITHOUT_KEY)[vendor]
    assert len(request) == expected, f"{len(request)} statements:\n{_listing(request)}"
    assert len(locked) == UNDER_LOCK[(bool(key), vendor)], _listing(locked)
    assert len(after) <= BROADCAST_AT_MOST, _listing(after)


@pytest.mark.django_db(transaction=True)
def test_a_check_reads_nothing_back_and_locks_once(table, users):
    request, locked, _ = _split(_roll(table("cofd", manual=True), users, "read-back-key"))
    reads = [sql for sql in locked if sql.lstrip().upper().startswith("SELECT")]
    # The table (periods, seed, character), with the lock on PostgreSQL.
    assert len(reads) == 1, _listing(reads)
    assert sum("FOR UPDATE" in sql for sql in request) <= 1, _listing(request)
    memberships = [sql for sql in request if "campaign_membership" in sql]
    assert len(memberships) == 1, _listing(memberships)  # the role, read once (with the token)


@pytest.mark.postgres  # SQLite runs in-process: it has no round trips to save
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("key", [None, "round-trips-key"], ids=["no-key", "idempotency-key"])
def test_under_the_lock_a_check_waits_for_the_database_twice(table, users, key):
    trips = _round_trips(_roll(table("cofd", manual=True), users, key, entries=True))
    assert len(trips) == ROUND_TRIPS_UNDER_LOCK, _listing(trips)
    assert trips[-1].upper().startswith("COMMIT")


def _roll_behind(t, write: Callable[[], None], rollback: bool = False) -> tuple[Any, list]:
    """Alice's check of Wits (server dice) sent while another writer holds the stream lock:
    ``write`` runs in that writer's transaction, which waits until the check waits for the
    lock, then commits (or rolls back). The check's answer and its statements."""
    holding, release, held = threading.Event(), threading.Event(), {}

    def hold() -> None:
        try:
            with transaction.atomic():
                write()
                holding.set()
                release.wait(30)
                transaction.set_rollback(rollback)
        finally:
            connection.close()

    def wait_and_roll() -> None:
        try:
            with CaptureQueriesContext(connection) as captured:
                held["answer"] = t.clients["alice"].post(
                    f"{t.url}/checks/",
                    {"character": str(t.characters["alice"].pk), "traits": ["Wits"]},
                    format="json",
                )
            held["entries"] = captured.captured_queries
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(30)
    waiter = threading.Thread(target=wait_and_roll)
    waiter.start()
    try:
        _until_a_backend_waits_for_a_lock()
    finally:
        release.set()
        holder.join(30)
        waiter.join(30)
    assert held["answer"].status_code == 201, held["answer"].content
    return held["answer"], held["entries"]


@pytest.mark.postgres  # SQLite's writers never wait inside a statement: BEGIN IMMEDIATE waits
@pytest.mark.django_db(transaction=True)
def test_a_check_that_waited_for_the_lock_reads_what_the_holder_committed(table, users):
    """Another writer holds the lock and commits a roll (it took the session's next roll key)
    while this check waits: the check's locking statement read the tables as they were when it
    started, so it reads them once more under the lock, and decides on the key after the
    holder's — one round trip more than a check that found the lock free."""
    t = table("cofd", manual=False)  # server dice: each roll takes the session's next key
    _give(t, "alice", 1)
    held = {}

    def roll() -> None:
        check = services.check_roll(
            campaign=Campaign.objects.get(pk=t.campaign.pk),
            actor=users["alice"],
            request={
                "character": str(t.characters["alice"].pk),
                "traits": ["Wits"],
                "willpower": True,  # a change of the character's row too
            },
        )
        held["index"] = check.key_index

    answer, entries = _roll_behind(t, roll)
    assert answer.json()["data"]["dice_key"]["index"] == held["index"] + 1
    trips = _round_trips(entries)
    assert len(trips) == ROUND_TRIPS_UNDER_LOCK + 1, _listing(trips)
    assert trips[0] == trips[1] and "FOR UPDATE OF cc" in trips[0], _listing(trips)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("ends", ["commits", "rolls back"])
def test_a_holder_that_appends_nothing_is_seen_by_the_check_that_waited(table, users, ends):
    """A writer under `lock_stream` that changes what a check decides on without an event (a
    sheet edited by hand here; a future service that forgets its event) and commits: the check
    that waited rolls the sheet as committed (Wits 5, not 3), because the lock itself leaves the
    head's row a new version. One that rolls back leaves the row as it was: the check that
    waited reads once, as one that found the lock free."""
    t = table("cofd", manual=False)
    sheet = Character.objects.get(pk=t.characters["alice"].pk)
    wits = {**sheet.traits, "attributes": {**sheet.traits["attributes"], "Wits": 5}}

    def edit() -> None:
        lock_stream(t.campaign.pk)
        Character.objects.filter(pk=sheet.pk).update(traits=wits)

    try:
        answer, entries = _roll_behind(t, edit, rollback=ends == "rolls back")
    finally:  # the log's sheet again: the teardown rebuilds the read models from the log
        Character.objects.filter(pk=sheet.pk).update(traits=sheet.traits)
    assert answer.json()["data"]["rolls"][0]["check"]["pool"] == (5 if ends == "commits" else 3)
    trips = _round_trips(entries)
    extra = 1 if ends == "commits" else 0
    assert len(trips) == ROUND_TRIPS_UNDER_LOCK + extra, _listing(trips)


def _until_a_backend_waits_for_a_lock(seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.01)
    raise AssertionError("the second check never waited for the lock")


def _willpower(t) -> dict:
    _give(t, "alice", 2)
    return {"traits": ["Wits"], "willpower": True, "faces": [8, 2, 3, 4, 5, 6]}


def _failed_again(t) -> dict:
    t.roll("alice", traits=["Wits"], task="the ritual", faces=[2, 3, 4])
    return {"traits": ["Wits"], "task": "the ritual", "faces": [2, 3, 4]}


def _succeeded_at_last(t) -> dict:
    t.roll("alice", traits=["Wits"], task="the ritual", faces=[2, 3, 4])
    return {"traits": ["Wits"], "task": "the ritual", "faces": [9, 3, 4]}


def _helped(t) -> dict:
    helper = t.roll("boris", traits=["Wits"], faces=[8, 9, 2])
    return {"traits": ["Wits", "Occult"], "helpers": [helper["seq"]], "faces": [2] * 7}


RULE_HEAVY = {
    # CofD (the table's default options): Willpower spent; a task failed again (its counter
    # raised); a task won after a failure (its counter gone).
    "willpower": ("cofd", {}, _willpower),
    "failed-again": ("cofd", {}, _failed_again),
    "task-won": ("cofd", {}, _succeeded_at_last),
    # A chance die's dramatic failure earning a Beat (the option on).
    "beat": (
        "cofd",
        {"beat_on_dramatic_failure": True},
        lambda t: {"traits": ["Wits"], "pool": -3, "faces": [1]},
    ),
    # The Storyteller system's free botch, used.
    "free-botch": (
        "storyteller",
        {},
        lambda t: {"traits": ["Mental"], "faces": [1, 3]},
    ),
}


@pytest.mark.postgres  # SQLite runs in-process: it has no round trips to save
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("case", RULE_HEAVY, ids=list(RULE_HEAVY))
def test_a_check_the_stateful_rules_change_waits_for_the_database_twice(table, case):
    """What the rules record with a check (Willpower and Beats on the sheet, a task's failed
    attempts, a free botch or a helper used) goes with the COMMIT: nothing under the lock reads
    back what the lock's own read brought, and no write waits on its own."""
    system, options, prepare = RULE_HEAVY[case]
    t = table(system, **options)
    request = prepare(t)
    with CaptureQueriesContext(connection) as captured:
        t.roll("alice", **request)
    trips = _round_trips(captured.captured_queries)
    assert len(trips) == ROUND_TRIPS_UNDER_LOCK, _listing(trips)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_naming_helper_rolls_reads_them_once_under_the_lock(table):
    """The rolls a request names as helpers (any of the session's) are read with whether they
    were used already, in one round trip; their use goes with the COMMIT."""
    t = table("cofd")
    request = _helped(t)
    with CaptureQueriesContext(connection) as captured:
        t.roll("alice", **request)
    trips = _round_trips(captured.captured_queries)
    assert len(trips) == ROUND_TRIPS_UNDER_LOCK + 1, _listing(trips)
    assert "rolls_ruleuse" in trips[1], _listing(trips)  # the rolls and their uses, together


def _lock_to_commit(entries: list[dict]) -> list[str]:
    """The round trips from the statement that takes the stream lock to COMMIT (any write)."""
    sqls = [entry["sql"] for entry in entries]
    start = next(i for i, sql in enumerate(sqls) if "FOR UPDATE" in sql)
    end = next(i for i, sql in enumerate(sqls) if sql.upper().startswith("COMMIT"))
    under = entries[start : end + 1]
    return [e["sql"] for e in under if not (e.get("with_commit") or e.get("pipelined"))]


def _dramatic_failure(t) -> tuple[str, str, dict]:
    failed = t.roll("alice", traits=["Wits"], faces=[2, 3, 4])
    return "alice", f"checks/{failed['seq']}/dramatic-failure/", {}


def _fortune(t) -> tuple[str, str, dict]:
    rolled = t.roll("alice", traits=["Dexterity"], faces=[1, 2, 3])
    return "alice", f"checks/{rolled['seq']}/fortune/", {"die": 0, "value": 6}


def _extra_nice(t) -> tuple[str, str, dict]:
    rolled = t.roll("alice", traits=["Firearms", "Quick draw"], faces=[4, 4])
    return "alice", f"checks/{rolled['seq']}/extra-nice/", {"count": 2}


def _reveal(t) -> tuple[str, str, dict]:
    hidden = t.roll("alice", traits=["Wits"], faces=[8, 3, 4], visibility="private")
    return "gm", f"checks/{hidden['seq']}/reveal/", {}


FOLLOW_UPS = {
    "dramatic-failure": ("cofd", _dramatic_failure),  # a Beat, the chapter's allowance
    "fortune": ("age", _fortune),  # Fortune off the sheet
    "extra-nice": ("nice_damnit", _extra_nice),
    "reveal": ("cofd", _reveal),
}


@pytest.mark.postgres  # SQLite runs in-process: it has no round trips to save
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("case", FOLLOW_UPS, ids=list(FOLLOW_UPS))
def test_a_follow_up_waits_for_the_database_twice_under_the_lock(table, case):
    """A follow-up reads its check with what its rule reads (the character, the open periods,
    the dramatic failures taken) in the lock's round trip, and what it changes (the check's
    record, the sheet, the allowance used) goes with the COMMIT: nothing is read back."""
    system, prepare = FOLLOW_UPS[case]
    t = table(system)
    who, path, body = prepare(t)
    with CaptureQueriesContext(connection) as captured:
        answer = t.post(who, path, body, expect=200)
    trips = _lock_to_commit(captured.captured_queries)
    assert len(trips) == ROUND_TRIPS_UNDER_LOCK, _listing(trips)
    assert answer["seq"] == int(path.split("/")[1])  # the check as amended, answered


@pytest.mark.postgres  # SQLite runs in-process: it has no round trips to save
@pytest.mark.django_db(transaction=True)
def test_answering_the_gms_call_waits_for_the_database_twice_under_the_lock(table):
    """A call's answers come at once (every player named rolls): the call comes with the lock's
    read, and marking it answered goes with the COMMIT."""
    t = table("cofd")
    named = [str(t.characters[who].pk) for who in ("alice", "boris")]
    call = t.post(
        "gm", "calls/", {"characters": named, "request": {"traits": ["Wits"]}}, expect=201
    )
    with CaptureQueriesContext(connection) as captured:
        t.roll("alice", call=call["id"], faces=[2, 3, 4])
    trips = _lock_to_commit(captured.captured_queries)
    assert len(trips) == ROUND_TRIPS_UNDER_LOCK, _listing(trips)
    t.roll("boris", call=call["id"], faces=[8, 3, 4])
    assert not t.get("gm", "calls/"), "answered by both: closed"
