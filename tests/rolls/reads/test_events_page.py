"""`events_for` (GET events/ and the socket's catch-up) reads its page as rows through the
recorder: every filter and their combinations select what the ORM's filters select."""

from __future__ import annotations

import itertools

import pytest

from campaign import services
from campaign.models import Membership
from eventlog.models import Event
from rolls.reads.selectors import events_for

pytestmark = pytest.mark.django_db

ROLL = {"traits": ["Physical"], "faces": [7, 2, 3]}


def test_every_filter_and_combination_selects_what_the_orm_selects(table, users):
    t = table("storyteller")
    first_session = Event.objects.filter(campaign=t.campaign, type="session.started").get()
    for who in ("alice", "boris", "alice"):
        t.roll(who, **ROLL)
    t.roll("boris", visibility="private", **ROLL)
    services.end_session(campaign=t.campaign, actor=users["gm"])
    services.end_chapter(campaign=t.campaign, actor=users["gm"])
    services.start_chapter(campaign=t.campaign, actor=users["gm"])
    services.start_session(campaign=t.campaign, actor=users["gm"])
    t.roll("alice", **ROLL)
    gm = Membership.objects.get(campaign=t.campaign, user=users["gm"])
    chapter = Event.objects.filter(campaign=t.campaign, type="chapter.started").first()
    alice = str(t.characters["alice"].pk)
    filters = {
        "types": [None, ["check.rolled"], ["check.rolled", "session.ended"]],
        "session": [None, str(first_session.session_id)],
        "chapter": [None, str(chapter.chapter_id)],
        "character": [None, alice],
        "after": [0, 9],
        "until": [None, 14],
        "limit": [200, 2],
    }
    for values in itertools.product(*filters.values()):
        given = dict(zip(filters, values, strict=True))
        expected = Event.objects.filter(campaign=t.campaign, seq__gt=given["after"])
        if given["until"] is not None:
            expected = expected.filter(seq__lte=given["until"])
        if given["types"]:
            expected = expected.filter(type__in=given["types"])
        for name in ("session", "chapter", "character"):
            if given[name]:
                expected = expected.filter(**{f"{name}_id": given[name]})
        seqs = list(expected.order_by("seq").values_list("seq", flat=True)[: given["limit"]])
        shown = events_for(membership=gm, **given)
        assert [event["seq"] for event in shown] == seqs, given
    assert [e["seq"] for e in events_for(membership=gm, character=alice)], "alice rolled"
