"""A check's live frames and its REST answer presented from what the write had in hand (#17): the
check row, the campaign, the character, the periods open as of its seq and the dramatic failures
its answer read under the lock. They must be what a fresh read of the log shows every class of
viewer (the catch-up's reading), and cost a fixed number of statements."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from campaign import services as campaign_services
from campaign.models import Membership
from eventlog.models import Event
from rolls.checks import followups, services
from rolls.live import catchup
from rolls.live.broadcast import group_user, messages_for
from rolls.models import Check
from rolls.reads.present import present_check, present_to_each, written_check
from tests.live.conftest import FAILURE, SUCCESS, page_events

# Publishing a check's frames: the roster (members and usernames), one statement, whatever the
# roll (a failure's dramatic failure offers were read by the answer, under the lock)…
PUBLISH_STATEMENTS = 1
# …and none while the process keeps the roster as of the check's (rolls/live/broadcast.py).
KEPT_ROSTER_STATEMENTS = 0


@pytest.fixture(autouse=True)
def _no_kept_pages():
    catchup.forget()
    yield
    catchup.forget()


def _members(table) -> list[Membership]:
    return list(Membership.objects.filter(campaign=table.campaign).order_by("user_id"))


def _write(table, name: str, visibility: str, faces=FAILURE) -> Check:
    """A check as the API writes it: rolled, then its answer presented inside the transaction."""
    check = services.check_roll(
        campaign=table.campaign,
        actor=table.users[name],
        request=table.roll(name, visibility, faces=faces),
    )
    actor = Membership.objects.get(campaign=table.campaign, user=table.users[name])
    present_check(check, actor)
    return check


def _fresh_frames(seq: int, table) -> dict[int, dict]:
    """What the socket's catch-up reads and shows each member for ``seq`` (the log, read now)."""
    table.campaign.refresh_from_db()
    head = (table.campaign.head_seq, table.campaign.head_hash)
    shown = {}
    for member in _members(table):
        page = catchup.page_after(member, seq - 1, seq, head)
        shown[member.user_id] = page_events(page)[0]
    return shown


def _assert_frames_are_a_fresh_reads(table, check: Check) -> None:
    event = check.event
    assert written_check(event) is check  # presented from the write's facts, not read again
    fresh_event = Event.objects.get(campaign=table.campaign, seq=check.seq)
    members = _members(table)
    written = {uid: json.loads(json.dumps(f, default=str)) for uid, f in _each(event, members)}
    assert written == _fresh_frames(check.seq, table)
    assert _parsed(messages_for(event)) == _parsed(messages_for(fresh_event))


def _parsed(pairs: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """The messages with their frames parsed: the payload's keys come in the order the write
    built it, or stored it, as they always did."""
    return [(group, {**message, "text": json.loads(message["text"])}) for group, message in pairs]


def _each(event: Event, members: list[Membership]):
    return present_to_each(event, members).items()


def _offers(frame: dict) -> list[str]:
    return [offer["kind"] for offer in frame.get("follow_ups", [])]


@pytest.mark.django_db
@pytest.mark.parametrize("visibility", ["public", "private", "blind"])
@pytest.mark.parametrize("roller", ["alice", "gm"])
@pytest.mark.parametrize("faces", [FAILURE, SUCCESS], ids=["failure", "success"])
def test_a_checks_frames_are_what_a_fresh_read_shows_each_class(table, roller, visibility, faces):
    _assert_frames_are_a_fresh_reads(table, _write(table, roller, visibility, faces))


@pytest.mark.django_db
def test_offers_follow_what_each_viewer_knows_before_and_after_a_reveal(table, users):
    """The GM turns alice's blind failure into a dramatic failure: the GM knows the chapter's is
    taken, alice does not (she is offered one on her next failure) until the roll is revealed."""
    blind = _write(table, "alice", "blind")
    followups.take_dramatic_failure(campaign=table.campaign, actor=users["gm"], seq=blind.seq)
    before = _write(table, "alice", "public")
    _assert_frames_are_a_fresh_reads(table, before)
    frames = dict(_each(before.event, _members(table)))
    assert _offers(frames[users["alice"].pk]) == ["dramatic_failure"]
    assert _offers(frames[users["gm"].pk]) == []

    services.reveal_check(campaign=table.campaign, actor=users["gm"], seq=blind.seq)
    after = _write(table, "alice", "public")
    _assert_frames_are_a_fresh_reads(table, after)
    frames = dict(_each(after.event, _members(table)))
    assert _offers(frames[users["alice"].pk]) == []
    assert frames[users["alice"].pk] == frames[users["boris"].pk]  # nothing left to offer her


@pytest.mark.django_db
@pytest.mark.parametrize("visibility", ["private", "blind"])
def test_members_who_came_or_went_after_the_roll_see_what_a_fresh_read_shows(
    table, users, visibility
):
    """Frames are sent after COMMIT, to the members then: one who joined after the roll gets
    the stub, one removed before the frames were sent gets nothing, an observer the stub."""
    check = _write(table, "alice", visibility)
    campaign_services.join_campaign(invite_code=table.campaign.invite_code, user=users["stranger"])
    campaign_services.leave_campaign(
        campaign=table.campaign, actor=users["gm"], user_id=users["boris"].pk
    )
    _assert_frames_are_a_fresh_reads(table, check)
    frames = dict(_each(check.event, _members(table)))
    assert users["boris"].pk not in frames
    for name in ("stranger", "olga"):
        assert frames[users[name].pk]["redacted"], name
    pairs = messages_for(check.event)
    assert group_user(table.id, users["boris"].pk) not in {group for group, _ in pairs}
    assert all(users["boris"].pk not in message.get("full_for", []) for _, message in pairs)
    owner_sees = visibility == "private"
    assert frames[users["alice"].pk]["redacted"] is not owner_sees


@pytest.mark.django_db
def test_a_check_written_without_an_answer_reads_no_offers_again(table):
    """A service called outside the API (a command, the socket) leaves no answer's reading: the
    frames take the dramatic failures taken from the check's own read of its table (under the
    lock), for every class of viewer, and read only the roster."""
    check = services.check_roll(
        campaign=table.campaign, actor=table.users["alice"], request=table.roll("alice")
    )
    with CaptureQueriesContext(connection) as captured:
        pairs = messages_for(check.event)
    assert len(captured) == PUBLISH_STATEMENTS, _listing(captured)
    fresh = messages_for(Event.objects.get(campaign=table.campaign, seq=check.seq))
    assert _parsed(pairs) == _parsed(fresh)


def _listing(captured: CaptureQueriesContext) -> str:
    return "\n".join(f"  {query['sql'][:160]}" for query in captured.captured_queries)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("faces", [FAILURE, SUCCESS], ids=["failure", "success"])
@pytest.mark.parametrize("roller", ["alice", "gm"])
@pytest.mark.parametrize("key", [True, False], ids=["idempotency-key", "no-key"])
def test_publishing_a_checks_frames_costs_a_fixed_number_of_statements(table, roller, faces, key):
    """Through the API, as the pages roll (with an Idempotency-Key, the answer is presented
    inside the write's transaction; without one, after it): from the write's facts, a failure's
    offers take the dramatic failures taken from the table read under the lock (for the answer
    and the frames together), and the frames read nothing besides: the warm roll's publishing
    kept the roster. A change that adds a statement fails here."""
    client = APIClient(HTTP_ACCEPT_LANGUAGE="en")
    client.credentials(HTTP_AUTHORIZATION=f"Token {table.tokens[roller]}")
    body = {**table.roll(roller, faces=faces), "client_seed": "5eed" * 8}
    url = f"/api/campaigns/{table.id}/checks/"
    client.post(url, body, format="json")  # warm: first-use reads
    headers = {"HTTP_IDEMPOTENCY_KEY": f"frames-{roller}-{faces}"} if key else {}
    with CaptureQueriesContext(connection) as captured:
        answer = client.post(url, body, format="json", **headers)
    assert answer.status_code == 201, answer.content
    # Not the check's: the webhook sender's look-up, at most every 30 s per process.
    statements = [
        query["sql"]
        for query in captured.captured_queries
        if "webhooks_webhook" not in query["sql"]
    ]
    written = next(i for i, sql in enumerate(statements) if _inserts_the_check(sql))
    commit = next(i for i, sql in enumerate(statements) if sql.upper().startswith("COMMIT"))
    reads = [sql for sql in statements[written:] if sql.lstrip().upper().startswith("SELECT")]
    assert len(reads) == KEPT_ROSTER_STATEMENTS, "\n".join(reads)
    if key:  # the answer read under the lock what the frames use after COMMIT
        assert len(statements[commit + 1 :]) == KEPT_ROSTER_STATEMENTS, _listing(captured)
    kinds = [offer["kind"] for offer in answer.json()["follow_ups"]]
    assert kinds == (["dramatic_failure"] if faces == FAILURE else [])


def _inserts_the_check(sql: str) -> bool:
    """The check row's INSERT: a statement of its own, or a CTE of the append's (PostgreSQL)."""
    return f"INSERT INTO {Check._meta.db_table} " in sql.replace('"', "")


@pytest.mark.django_db(transaction=True)
def test_a_kept_roster_is_read_again_once_the_membership_changed(table, django_user_model):
    """A process keeps the roster it read for as long as nobody joins, leaves or changes role:
    each of those is an event that moves the campaign's roster_seq, which the next check reads
    with the stream lock, so the roster is read again, also when another process (here: nothing
    this process is told besides the database) made the change."""
    from rolls.live import broadcast

    messages_for(_write(table, "alice", "private").event)  # read, and kept
    kept = _write(table, "alice", "private")
    with CaptureQueriesContext(connection) as captured:
        messages_for(kept.event)
    assert len(captured) == KEPT_ROSTER_STATEMENTS, _listing(captured)

    stale = broadcast._rosters[table.id]
    carol = django_user_model.objects.create_user("carol", password="carol-password")
    campaign_services.join_campaign(invite_code=table.campaign.invite_code, user=carol)
    gm, boris, olga = (table.users[name] for name in ("gm", "boris", "olga"))
    campaign_services.leave_campaign(campaign=table.campaign, actor=gm, user_id=boris.pk)
    campaign_services.change_role(campaign=table.campaign, actor=gm, user_id=olga.pk, role="gm")
    # This process published those events itself (and read the roster again meanwhile): put
    # back what it kept before them, as a process that saw none of them keeps it.
    broadcast._rosters[table.id] = stale
    check = _write(table, "alice", "private")  # published at COMMIT: the roster read again
    assert check.campaign.roster_seq > kept.campaign.roster_seq
    pairs = messages_for(check.event)
    assert broadcast._rosters[table.id][0] == broadcast.roster_stamp(check.campaign)
    members, _ = broadcast._rosters[table.id][2]
    roles = {member.user_id: member.role for member in members}
    assert carol.pk in roles and boris.pk not in roles and roles[olga.pk] == "gm"
    fresh = messages_for(Event.objects.get(campaign=table.campaign, seq=check.seq))
    assert _parsed(pairs) == _parsed(fresh)
    full_for = {uid for _, message in pairs for uid in message.get("full_for", [])}
    assert boris.pk not in full_for
