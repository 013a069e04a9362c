"""Rendering once per class of viewer (the live feed's frames, the socket's catch-up pages shared
between sockets) shows every member exactly what rendering for them alone shows: the REST log."""

from __future__ import annotations

import json

import pytest
from django.utils import translation

from campaign import services as campaign_services
from campaign.models import Membership
from eventlog.models import Event
from rolls.checks import followups, services
from rolls.live import catchup
from rolls.reads.present import SharedPage, present_events, present_to_each
from rolls.reads.selectors import events_for
from tests.live.conftest import SUCCESS, page_events

pytestmark = pytest.mark.django_db

DRAMATIC = [1, 2, 3, 4, 5]  # a failure: a dramatic failure may be taken for a Beat


@pytest.fixture(autouse=True)
def _no_kept_pages():
    catchup.forget()
    yield
    catchup.forget()


@pytest.fixture
def second_gm(table, users):
    campaign_services.join_campaign(invite_code=table.campaign.invite_code, user=users["stranger"])
    campaign_services.change_role(
        campaign=table.campaign, actor=users["gm"], user_id=users["stranger"].pk, role="gm"
    )
    return users["stranger"]


def _roll(table, name: str, visibility: str, faces=DRAMATIC) -> int:
    check = services.check_roll(
        campaign=table.campaign,
        actor=table.users[name],
        request=table.roll(name, visibility, faces=faces),
    )
    return check.seq


def _members(table) -> list[Membership]:
    return list(Membership.objects.filter(campaign=table.campaign).order_by("user_id"))


def _head(table) -> catchup.Head:
    table.campaign.refresh_from_db()
    return table.campaign.head_seq, table.campaign.head_hash


def _page(table, membership: Membership, after: int, until: int) -> catchup.Page | None:
    """The page a socket is sent: kept already, or read (what `_send_from_db` does)."""
    head = _head(table)
    return catchup.kept_page(membership, after, until, head) or catchup.page_after(
        membership, after, until, head
    )


def _caught_up(table, membership: Membership, after: int, until: int) -> list[dict]:
    """Every catch-up page a socket of this member is sent for (after, until]."""
    shown = []
    while after < until:
        page = _page(table, membership, after, until)
        if page is None:
            break
        frames = [json.loads(frame) for frame in page.frames]
        assert {frame["type"] for frame in frames} == {"events"}
        shown += page_events(page)
        after = page.last
    return shown


@pytest.fixture
def mixed_log(table, second_gm) -> int:
    """Public, private and blind rolls by players and the GM; a follow-up; the log's start."""
    start = 0
    _roll(table, "alice", "public")
    _roll(table, "alice", "private")
    _roll(table, "alice", "blind")
    boris = _roll(table, "boris", "private")
    _roll(table, "gm", "blind")
    _roll(table, "gm", "public", faces=SUCCESS)
    followups.take_dramatic_failure(campaign=table.campaign, actor=table.users["boris"], seq=boris)
    _roll(table, "boris", "public")
    return start


def test_every_member_is_sent_what_the_rest_log_shows_them(table, mixed_log):
    table.campaign.refresh_from_db()
    head = table.campaign.head_seq
    for membership in _members(table):
        reference = events_for(membership=membership, after=0, limit=10_000)
        for after in (0, 3, head - 2):  # from the start, and resuming in mid-page
            shown = _caught_up(table, membership, after, head)
            assert shown == [e for e in reference if e["seq"] > after], membership.user


def test_the_live_rendering_per_class_is_each_members_own(table, mixed_log):
    members = _members(table)
    for event in Event.objects.filter(campaign=table.campaign).order_by("seq"):
        shared = present_to_each(event, members)
        for membership in members:
            assert shared[membership.user_id] == present_events([event], membership)[0]


def test_gms_share_a_rendering_and_so_do_those_with_no_stake(table, second_gm):
    _roll(table, "alice", "public")
    _roll(table, "alice", "private")
    events = list(Event.objects.filter(campaign=table.campaign).order_by("seq"))
    page = SharedPage(events)
    member = {m.user.username: m for m in _members(table)}
    assert page.class_of(member["gm"]) == page.class_of(member["stranger"])  # both GMs
    # The observer and boris (a stub of alice's private roll, nothing to act on) alike;
    assert page.class_of(member["olga"]) == page.class_of(member["boris"])
    # alice sees her private roll and is offered follow-ups on her rolls: her own class.
    assert page.class_of(member["alice"]) not in {
        page.class_of(member[name]) for name in ("gm", "olga")
    }


def test_on_a_page_of_public_rolls_the_rolls_owner_shares_no_page_with_the_others(table):
    # Nothing hidden sets them apart: only alice's stake in her failed roll (her dramatic
    # failure offer) does. A page shared with boris or the observer would give them her offer,
    # or take it from her.
    start = table.campaign.head_seq
    _roll(table, "alice", "public")
    table.campaign.refresh_from_db()
    head = table.campaign.head_seq
    member = {m.user.username: m for m in _members(table)}
    page = SharedPage(list(Event.objects.filter(campaign=table.campaign, seq__gt=start)))
    assert page.class_of(member["alice"]) != page.class_of(member["boris"])
    assert page.class_of(member["boris"]) == page.class_of(member["olga"])
    for name in ("alice", "boris", "olga"):  # alice's page is kept first
        reference = events_for(membership=member[name], after=start, limit=10_000)
        assert _caught_up(table, member[name], start, head) == reference, name
    offered = _caught_up(table, member["alice"], start, head)[-1]["follow_ups"]
    assert [offer["kind"] for offer in offered] == ["dramatic_failure"]


def test_sockets_of_one_class_share_a_page_and_a_new_head_retires_it(table):
    start = table.campaign.head_seq  # after olga's role change (a page stops after it for her)
    seq = _roll(table, "alice", "private")
    table.campaign.refresh_from_db()
    head = table.campaign.head_seq
    boris = Membership.objects.get(campaign=table.campaign, user=table.users["boris"])
    olga = Membership.objects.get(campaign=table.campaign, user=table.users["olga"])
    first = _page(table, boris, start, head)
    assert len(catchup._rendered) == 1
    assert catchup.kept_page(olga, start, head, _head(table)) is None  # her class: not known yet
    assert _page(table, olga, start, head).frames == first.frames
    assert len(catchup._rendered) == 1  # rendered once for both
    assert catchup.kept_page(olga, start, head, _head(table)).frames == first.frames
    stub = next(e for e in page_events(first) if e["seq"] == seq)
    assert stub["redacted"]

    services.reveal_check(campaign=table.campaign, actor=table.users["gm"], seq=seq)
    table.campaign.refresh_from_db()
    shown = _caught_up(table, boris, 0, table.campaign.head_seq)
    assert not next(e for e in shown if e["seq"] == seq)["redacted"]
    assert shown == events_for(membership=boris, after=0, limit=10_000)


def test_a_page_stops_after_an_event_about_the_sockets_own_membership(table, users):
    _roll(table, "alice", "public")
    campaign_services.change_role(
        campaign=table.campaign, actor=users["gm"], user_id=users["boris"].pk, role="observer"
    )
    _roll(table, "alice", "public")
    table.campaign.refresh_from_db()
    head = table.campaign.head_seq
    boris = Membership.objects.get(campaign=table.campaign, user=users["boris"])
    page = _page(table, boris, 0, head)
    assert page.about_me and page.last == head - 1
    alice = Membership.objects.get(campaign=table.campaign, user=users["alice"])
    assert not _page(table, alice, 0, head).about_me


def test_a_presentation_holds_no_words_so_a_page_serves_every_language(table, mixed_log):
    """The catch-up cache is not keyed by language: that holds while presenting translates
    nothing. If this fails, key `rolls.live.catchup` by the language too."""
    events = list(Event.objects.filter(campaign=table.campaign).order_by("seq"))
    for membership in _members(table):
        with translation.override("ru"):
            russian = present_events(events, membership)
        with translation.override("en"):
            english = present_events(events, membership)
        assert json.dumps(russian, default=str) == json.dumps(english, default=str)
