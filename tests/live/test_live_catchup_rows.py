"""The socket's catch-up presents a page from its check rows read in one hand-written statement
(rolls.reads.page_checks), not through the ORM (#17): every class of viewer must be sent the
very bytes the ORM's reading gave them, before and after a reveal, in every system, and a page
must cost a fixed number of statements."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import Future

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from campaign import services as campaign_services
from campaign.models import Campaign, Membership
from eventlog.event_types import CHECK_ROLLED
from eventlog.models import Event
from eventlog.recorders import recorder
from rolls.checks import followups
from rolls.checks import services as rolls
from rolls.live import catchup
from rolls.models import Check
from rolls.reads import present
from rolls.reads.page_checks import checks_of, target_seq
from tests.live.conftest import SUCCESS, page_events
from tests.rolls.trust.conftest import TRAITS, play  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db
SYSTEMS = ("cofd", "age", "nice_damnit", "storyteller", "d6pool")
# A page's statements: the events, their check rows, the actors' names, the campaign, the open
# chapter and scene, each character the offers read, the dramatic failures of each (period,
# character) they read. GMs see every roll; a player's offers read only their own character.
PAGE_STATEMENTS = {"gm": 7, "alice": 7, "olga": 3}


@pytest.fixture(autouse=True)
def _no_kept_pages():
    catchup.forget()
    yield
    catchup.forget()


def _orm_checks(events):
    """The check rows as the presenter read them before #17: the ORM, with their events."""
    targets = {seq for event in events if (seq := target_seq(event)) is not None}
    if not targets:
        return {}
    rows = Check.objects.filter(campaign_id=events[0].campaign_id, seq__in=targets)
    return {check.seq: check for check in rows}


def _texts(campaign: Campaign, viewers: list[Membership]) -> dict[int, list[str]]:
    """Every frame of a whole catch-up from seq 0, per viewer (pages of 4 events: follow-ups
    and reveals point at checks of earlier pages)."""
    campaign.refresh_from_db()
    head = (campaign.head_seq, campaign.head_hash)
    shown = {}
    for viewer in viewers:
        after, frames = 0, []
        while after < campaign.head_seq:
            page = catchup.page_after(viewer, after, campaign.head_seq, head)
            frames += page.frames
            after = page.last
        shown[viewer.user_id] = frames
    catchup.forget()
    return shown


def _both_ways(campaign: Campaign, viewers: list[Membership], monkeypatch) -> None:
    new = _texts(campaign, viewers)
    with monkeypatch.context() as old_path:
        old_path.setattr(present, "checks_of", _orm_checks)
        old_path.setattr(catchup, "checks_of", _orm_checks)  # a page's rows come with its checks
        old = _texts(campaign, viewers)
    for viewer in viewers:
        assert new[viewer.user_id] == old[viewer.user_id], viewer


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_whole_catch_up_is_sent_the_bytes_the_orm_reading_gave(system, hidden_play, monkeypatch):
    monkeypatch.setattr(catchup, "PAGE", 4)
    hidden = hidden_play(system)
    _both_ways(hidden.campaign, hidden.viewers, monkeypatch)
    hidden.reveal()
    _both_ways(hidden.campaign, hidden.viewers, monkeypatch)


def _filtered_pages(campaign: Campaign) -> list[list]:
    """Pages that are not a stretch of the log, as REST's filters make them: every other event,
    and the follow-ups and reveals alone where the play took some (each check they need lies
    outside the page)."""
    events = list(Event.objects.filter(campaign=campaign).order_by("seq"))
    amending = [event for event in events if event.type != CHECK_ROLLED and target_seq(event)]
    return [events[::2], events[1::2], *([amending, amending[::-1]] if amending else [])]


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_filtered_page_is_presented_as_the_orm_reading_gave(system, hidden_play, monkeypatch):
    """REST's filtered pages read their checks by seq, a stretch by its bounds: both give every
    viewer what the ORM's reading did, before and after a reveal."""
    hidden = hidden_play(system)
    for revealed in (False, True):
        if revealed:
            hidden.reveal()
        pages = _filtered_pages(hidden.campaign)
        took_follow_ups = system in ("cofd", "age", "nice_damnit")
        assert len(pages) == (4 if took_follow_ups or revealed else 2)
        for events in pages:
            for viewer in hidden.viewers:
                new = present.present_events(events, viewer)
                with monkeypatch.context() as old_path:
                    old_path.setattr(present, "checks_of", _orm_checks)
                    old = present.present_events(events, viewer)
                assert new == old, (viewer, [event.seq for event in events])


def _page_statements(table, name: str, after: int) -> int:
    table.campaign.refresh_from_db()
    head = (table.campaign.head_seq, table.campaign.head_hash)
    viewer = Membership.objects.get(campaign=table.campaign, user=table.users[name])
    catchup.forget()
    with CaptureQueriesContext(connection) as statements:
        page = catchup.page_after(viewer, after, head[0], head)
    assert page is not None and page.last == head[0]
    return len(statements)


def test_a_page_costs_a_fixed_number_of_statements_whatever_its_checks(table):
    """Adding rolls, hidden ones and follow-ups to a page adds no statement."""

    def rolled(name: str, visibility: str, faces=None) -> Check:
        request = table.roll(name, visibility, **({"faces": faces} if faces else {}))
        actor = table.users[name]
        return rolls.check_roll(campaign=table.campaign, actor=actor, request=request)

    table.campaign.refresh_from_db()
    start, counts = table.campaign.head_seq, []  # after the members joined: one whole page
    for round_ in range(2):
        if round_:  # one dramatic failure per chapter
            campaign_services.end_chapter(campaign=table.campaign, actor=table.users["gm"])
            campaign_services.start_chapter(campaign=table.campaign, actor=table.users["gm"])
        for name in ("alice", "boris", "gm"):
            for visibility in ("public", "private", "blind"):
                rolled(name, visibility)
        rolled("alice", "public", SUCCESS)
        failed = rolled("alice", "private")
        followups.take_dramatic_failure(
            campaign=table.campaign, actor=table.users["alice"], seq=failed.seq
        )
        counts.append({name: _page_statements(table, name, start) for name in PAGE_STATEMENTS})
    assert counts == [PAGE_STATEMENTS, PAGE_STATEMENTS]


def _statement_work(sql: str, params: list) -> int:
    """What a statement reads, in units that do not depend on the machine's speed: SQLite's
    virtual-machine steps (in hundreds), PostgreSQL's buffers."""
    if connection.vendor == "sqlite":
        steps = [0]

        def step() -> int:
            steps[0] += 1
            return 0  # go on

        connection.connection.set_progress_handler(step, 100)
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql, params)
                cursor.fetchall()
        finally:
            connection.connection.set_progress_handler(None, 100)
        return steps[0]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", params)
        (plan,) = cursor.fetchone()
    top = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]
    return top["Shared Hit Blocks"] + top["Shared Read Blocks"]


def _checks_read(monkeypatch) -> Callable[[list], tuple[set[int], int]]:
    """checks_read(events) -> (the seqs of the check rows read for them, the statement's work)."""
    seen: list[tuple[str, list]] = []
    recorder_class = type(recorder())
    fetch_many = recorder_class.fetch_many

    def spied(self, sql: str, params: list) -> list[tuple]:
        seen.append((sql, params))
        return fetch_many(self, sql, params)

    monkeypatch.setattr(recorder_class, "fetch_many", spied)

    def checks_read(events: list) -> tuple[set[int], int]:
        seen.clear()
        found = set(checks_of(events))
        return found, _statement_work(*seen[-1])

    return checks_read


def _new_chapter(table) -> None:
    """A chapter of its own: one dramatic failure per chapter."""
    gm = table.users["gm"]
    campaign_services.end_chapter(campaign=table.campaign, actor=gm)
    campaign_services.start_chapter(campaign=table.campaign, actor=gm)


def _public_rolls(table, count: int) -> None:
    for _ in range(count):
        request = table.roll("alice", "public")
        rolls.check_roll(campaign=table.campaign, actor=table.users["alice"], request=request)


def _last_events(table, count: int) -> list:
    table.campaign.refresh_from_db()
    head = table.campaign.head_seq
    events = recorder().page(table.campaign.pk, after=head - count, until=head, limit=count)
    assert [event.seq for event in events] == list(range(head - count + 1, head + 1))
    return events


def test_a_page_s_check_rows_cost_as_much_however_long_the_campaign(table, monkeypatch):
    """The last page of a catch-up reads its checks by its range: about as much after a long
    campaign as after a short one (SQLite's planner, given the page's bounds OR'd with the checks
    its follow-ups amend, scanned every check of the campaign for each page)."""
    checks_read, alice = _checks_read(monkeypatch), table.users["alice"]
    work = []
    for earlier in (40, 400):
        _new_chapter(table)
        _public_rolls(table, earlier)
        failed, _last = (
            rolls.check_roll(campaign=table.campaign, actor=alice, request=table.roll("alice", v))
            for v in ("private", "public")
        )
        # A follow-up of a roll before the page: the page reads that check too.
        followups.take_dramatic_failure(campaign=table.campaign, actor=alice, seq=failed.seq)
        page = _last_events(table, 2)
        found, spent = checks_read(page)
        assert found == {failed.seq, page[0].seq}
        work.append(spent)
    # Ten times the checks before it: an index grows a level, a scan of them tenfold.
    assert work[1] < 2 * work[0], f"{work}: the later page read the campaign's every check"


def test_a_follow_up_alone_reads_its_check_however_far_back(table, monkeypatch):
    """A follow-up presented alone (the live feed's frame when it is written, the admin's view of
    it) reads its own check, as much 40 rolls after it as 400: not the checks in between."""
    checks_read, alice = _checks_read(monkeypatch), table.users["alice"]
    work = []
    for between in (40, 400):
        _new_chapter(table)
        failed = rolls.check_roll(
            campaign=table.campaign, actor=alice, request=table.roll("alice", "private")
        )
        _public_rolls(table, between)
        followups.take_dramatic_failure(campaign=table.campaign, actor=alice, seq=failed.seq)
        found, spent = checks_read(_last_events(table, 1))
        assert found == {failed.seq}
        work.append(spent)
    assert work[1] < 2 * work[0], f"{work}: the follow-up read every check since its roll"


def test_a_catch_up_reads_each_actor_s_username_once(play, users, monkeypatch):  # noqa: F811
    """The pages of one catch-up share the usernames read (as of one head): each page reads
    only the actors no page before it named, and every page names them as the REST log does."""
    from django.contrib.auth import get_user_model

    from rolls.reads.selectors import events_for

    monkeypatch.setattr(catchup, "PAGE", 5)
    monkeypatch.setattr(catchup, "LONG_PAGES", 1)  # pages of 5 throughout: more pages than actors
    campaign = play("cofd", end=False)
    viewer = Membership.objects.get(campaign=campaign, user=users["gm"])
    head = (campaign.head_seq, campaign.head_hash)
    users_table = get_user_model()._meta.db_table
    after, pages, shown = 0, 0, []
    with CaptureQueriesContext(connection) as statements:
        while after < head[0]:
            page = catchup.page_after(viewer, after, head[0], head)
            shown += page_events(page)
            after, pages = page.last, pages + 1
    actors = {event["actor"]["id"] for event in shown} - {None}
    named = [s for s in statements if users_table in s["sql"]]
    assert pages > len(actors) >= len(named) >= 1
    assert shown == events_for(membership=viewer, after=0, limit=10_000)


def test_a_long_catch_up_crosses_whole_stretches_as_one_page_each(play, users, monkeypatch):  # noqa: F811
    """From seq 0, the pages are whole stretches of LONG_PAGES pages while one is left before
    the head, then pages of PAGE: fewer statements, frames and hops to the reading thread. A
    socket resuming near the head reads no more than a page to send what it missed. Either way
    the events sent are the REST log's."""
    from rolls.reads.selectors import events_for

    monkeypatch.setattr(catchup, "PAGE", 2)
    monkeypatch.setattr(catchup, "LONG_PAGES", 3)
    campaign = play("cofd", end=False)
    viewer = Membership.objects.get(campaign=campaign, user=users["gm"])
    head = (campaign.head_seq, campaign.head_hash)
    assert head[0] > 2 * 6
    after, bounds, shown = 0, [], []
    while after < head[0]:
        page = catchup.page_after(viewer, after, head[0], head)
        events = page_events(page)
        bounds.append((events[0]["seq"], events[-1]["seq"]))
        shown += events
        after = page.last
    whole = head[0] - head[0] % 6
    assert bounds[: whole // 6] == [(n + 1, n + 6) for n in range(0, whole, 6)]
    assert all(last - first < 2 for first, last in bounds[whole // 6 :])
    assert shown == events_for(membership=viewer, after=0, limit=10_000)

    catchup.forget()
    resumed = catchup.page_after(viewer, head[0] - 1, head[0], head)
    assert [e["seq"] for e in page_events(resumed)] == [head[0]]
    (read,) = catchup._read.values()
    assert len(read.events) <= 2


def test_a_long_page_is_sent_in_frames_a_client_accepts(play, users, monkeypatch):  # noqa: F811
    """A whole stretch is one page but not one frame: clients cap a message (Python's websockets
    at 1 MiB, which a stretch of 1,000 checks passes), so a page goes out in `events` frames of
    at most FRAME_BYTES bytes of UTF-8, in order, each a whole JSON frame, and together the REST
    log, names in Cyrillic too."""
    from rolls.reads.selectors import events_for

    monkeypatch.setattr(catchup, "PAGE", 100)
    monkeypatch.setattr(catchup, "LONG_PAGES", 1)
    monkeypatch.setattr(catchup, "FRAME_BYTES", 4096)
    campaign = play("cofd", end=False, name="Стол доверия")
    viewer = Membership.objects.get(campaign=campaign, user=users["gm"])
    head = (campaign.head_seq, campaign.head_hash)
    page = catchup.page_after(viewer, 0, head[0], head)
    assert page is not None and page.last == head[0]
    assert len(page.frames) > 2
    for frame in page.frames:
        events = json.loads(frame)["events"]
        assert len(frame.encode()) <= 4096 or len(events) == 1
    assert any("\\u0421\\u0442\\u043e\\u043b" in frame for frame in page.frames)  # "Стол"
    assert page_events(page) == events_for(membership=viewer, after=0, limit=10_000)
    # A socket resuming inside the page is sent the rest of it, framed the same way.
    resumed = catchup.kept_page(viewer, 3, head[0], head)
    assert page_events(resumed) == events_for(membership=viewer, after=3, limit=10_000)


_PAGE_READ = "FROM campaign_event WHERE campaign_id = %s AND seq > %s AND seq <= %s ORDER BY seq"


def _pages(head: int) -> int:
    """The pages a catch-up from seq 0 to ``head`` reads (a play's head varies with its dice)."""
    after, pages = 0, 0
    while (read_key := catchup._read_key(0, after, head, (head, ""))) is not None:
        after, pages = read_key[2], pages + 1
    return pages


def _own_page_reads(statements: CaptureQueriesContext) -> int:
    return sum(_PAGE_READ in query["sql"] for query in statements.captured_queries)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_pages_read_ahead_are_sent_as_the_socket_would_read_them(hidden_play, monkeypatch):
    """On a socket's thread (no transaction open), each next page of a catch-up is read on the
    reader's thread while this one is presented (#17): the socket's own thread reads only the
    first page's events, every class of viewer is sent the bytes it is sent when each page is
    read in turn, before and after a reveal, and the reader's connection goes back after."""
    monkeypatch.setattr(catchup, "PAGE", 1)  # pages of 1, stretches of 5: several of each
    monkeypatch.setattr(catchup, "AHEAD_PATIENCE_SECONDS", 60.0)  # a loaded machine's reader
    hidden = hidden_play("cofd")
    gm = next(viewer for viewer in hidden.viewers if viewer.role == "gm")
    for revealed in (False, True):
        if revealed:
            hidden.reveal()
        with CaptureQueriesContext(connection) as own:
            _texts(hidden.campaign, [gm])
        assert _own_page_reads(own) == 1
        read_ahead = _texts(hidden.campaign, hidden.viewers)
        with monkeypatch.context() as in_turn:
            in_turn.setattr(catchup, "_reads_ahead", lambda: False)
            assert _texts(hidden.campaign, hidden.viewers) == read_ahead
    assert _pages(hidden.campaign.head_seq) >= 4
    assert catchup._ahead_reader.submit(lambda: connection.connection is None).result()
    # A pool of 2 keeps no connection for a reader (a socket's thread and the webhook sender's
    # take them): every page is read on the socket's own.
    options = settings.DATABASES["default"]["OPTIONS"]
    monkeypatch.setitem(
        settings.DATABASES["default"], "OPTIONS", {**options, "pool": {"max_size": 2}}
    )
    with CaptureQueriesContext(connection) as own:
        _texts(hidden.campaign, [gm])
    assert _own_page_reads(own) == _pages(hidden.campaign.head_seq)


@pytest.mark.postgres
def test_pages_are_read_in_turn_inside_a_transaction(hidden_play, monkeypatch):
    """Inside a transaction (a test's, a request's), a page read on another connection would not
    see what it wrote: every page is read on the caller's own."""
    monkeypatch.setattr(catchup, "PAGE", 1)
    hidden = hidden_play("cofd")
    gm = next(viewer for viewer in hidden.viewers if viewer.role == "gm")
    with CaptureQueriesContext(connection) as own:
        _texts(hidden.campaign, [gm])
    assert _own_page_reads(own) == _pages(hidden.campaign.head_seq)


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_stretch_s_check_rows_have_their_rolls_context(system, hidden_play):
    """A stretch's own check rows take their ids from their rolls' events on the page: the ids
    the check rows hold, for every check of the log, read as one stretch and as pages."""
    hidden = hidden_play(system)
    head = hidden.campaign.head_seq
    stored = {
        check.seq: (check.session_id, check.scene_id, check.chapter_id, check.character_id)
        for check in Check.objects.filter(campaign=hidden.campaign)
    }
    for size in (head, 3):
        for start in range(0, head, size):
            events = recorder().page(hidden.campaign.pk, after=start, limit=size)
            for seq, row in checks_of(events).items():
                ids = (row.session_id, row.scene_id, row.chapter_id, row.character_id)
                assert ids == stored[seq], (size, seq)
    assert any(ids[3] is not None for ids in stored.values())


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_page_the_reader_failed_is_read_by_the_socket_s_thread(hidden_play, monkeypatch, caplog):
    """The reader's failure (its connection broken, no pooled connection for it) costs the
    socket nothing but the time: its own thread reads the page, and the log says so."""
    monkeypatch.setattr(catchup, "PAGE", 1)
    hidden = hidden_play("cofd")
    gm = next(viewer for viewer in hidden.viewers if viewer.role == "gm")
    expected = _texts(hidden.campaign, [gm])

    def broken(read_key):
        raise RuntimeError("the reader's connection broke")

    monkeypatch.setattr(catchup, "_rows_on_own_connection", broken)
    with caplog.at_level("WARNING", logger="rolls.live"):
        assert _texts(hidden.campaign, [gm]) == expected
    assert "read here" in caplog.text and "the reader's connection broke" in caplog.text


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_page_the_reader_keeps_waiting_is_read_by_the_socket_s_thread(
    hidden_play, monkeypatch, caplog
):
    """A reader slower than AHEAD_PATIENCE_SECONDS (waiting for a pooled connection, say) holds
    the socket up no longer than that: its own thread reads the page, and the bytes are the
    same."""
    monkeypatch.setattr(catchup, "PAGE", 1)
    hidden = hidden_play("cofd")
    gm = next(viewer for viewer in hidden.viewers if viewer.role == "gm")
    expected = _texts(hidden.campaign, [gm])
    reader = catchup._rows_on_own_connection

    def slow(read_key):
        time.sleep(0.3)
        return reader(read_key)

    monkeypatch.setattr(catchup, "_rows_on_own_connection", slow)
    monkeypatch.setattr(catchup, "AHEAD_PATIENCE_SECONDS", 0.05)
    with caplog.at_level("WARNING", logger="rolls.live"):
        assert _texts(hidden.campaign, [gm]) == expected
    catchup._ahead_reader.submit(lambda: None).result()  # the last slow read is over
    assert "read here" in caplog.text and "TimeoutError" in caplog.text


def test_a_page_read_ahead_and_never_asked_for_is_dropped_after_a_while(monkeypatch):
    """A page read ahead for a socket that closed or moved on waits AHEAD_KEPT_SECONDS at most:
    then it is dropped, and the reader reads for others again (while AHEAD_KEPT such pages
    wait, none is read ahead)."""
    catchup.forget()
    monkeypatch.setattr(catchup, "_rows_on_own_connection", lambda read_key: ([], {}))
    head = (10_000, "h")
    waiting = {}
    for after in (0, 1000):  # two pages read ahead, never asked for
        read = Future()
        read.set_result(([], {}))
        key = catchup._read_key(1, after, 10_000, head)
        waiting[key] = read
        catchup._ahead[key] = (read, time.monotonic())
    catchup._read_ahead(1, 2000, 10_000, head)
    assert set(catchup._ahead) == set(waiting)  # AHEAD_KEPT wait: none read ahead
    for key, read in waiting.items():
        catchup._ahead[key] = (read, time.monotonic() - catchup.AHEAD_KEPT_SECONDS - 1)
    catchup._read_ahead(1, 2000, 10_000, head)
    assert set(catchup._ahead) == {catchup._read_key(1, 2000, 10_000, head)}
    catchup.forget()
