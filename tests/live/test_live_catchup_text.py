"""The socket's catch-up writes each event's JSON itself, with the stored payload's canonical text
spliced in (#17): for every class of viewer, in every system, before and after reveals, each
event must be the very bytes `json.dumps` of the presented event gives, and equal what the REST
log shows that member. A payload with text the canonical JSON keeps unescaped (Cyrillic, an
emoji, DEL) goes through the encoder instead."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from campaign.models import Campaign, Membership
from eventlog.recorders import Paged, recorder
from rolls.checks import services as rolls
from rolls.live import catchup
from rolls.reads.present import SharedPage, present_events
from rolls.reads.selectors import events_for
from tests.live.conftest import UNESCAPED, page_events
from tests.rolls.trust.conftest import TRAITS, play  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db
SYSTEMS = ("cofd", "age", "nice_damnit", "storyteller", "d6pool")


@pytest.fixture(autouse=True)
def _no_kept_pages():
    catchup.forget()
    yield
    catchup.forget()


def _same_texts(campaign: Campaign, viewers: list[Membership]) -> None:
    campaign.refresh_from_db()
    head = (campaign.head_seq, campaign.head_hash)
    for viewer in viewers:
        events = recorder().page(campaign.pk, after=0, limit=10_000)
        assert all(isinstance(event, Paged) for event in events)
        texts = SharedPage(events).texts_for(viewer)
        shown = present_events(recorder().page(campaign.pk, after=0, limit=10_000), viewer)
        assert [text for text, _ in texts] == [
            json.dumps(event, separators=(",", ":")) for event in shown
        ], viewer
        assert [in_full for _, in_full in texts] == [not e["redacted"] for e in shown]
        # A whole catch-up in pages (the next page read while one is sent reads the same).
        after, caught_up = 0, []
        while after < campaign.head_seq:
            page = catchup.page_after(viewer, after, campaign.head_seq, head)
            caught_up += page_events(page)
            after = page.last
        assert caught_up == events_for(membership=viewer, after=0, limit=10_000), viewer
        catchup.forget()


@pytest.mark.parametrize("system", SYSTEMS)
def test_each_event_is_the_bytes_json_dumps_gives_every_viewer(system, hidden_play):
    hidden = hidden_play(system)
    _same_texts(hidden.campaign, hidden.viewers)
    hidden.reveal()
    _same_texts(hidden.campaign, hidden.viewers)


@pytest.mark.parametrize("system", ["storyteller", "cofd"])
def test_a_page_decodes_only_the_payloads_presenting_reads(
    system,
    play,  # noqa: F811
    users,
    monkeypatch,
):
    """A roll's dice marks come from its check row (`Check.marks_json`) and every other event
    goes as stored: only a payload a follow-up or an offer reads is decoded. Storyteller, which
    has no follow-up, decodes none; in CofD the GM is offered dramatic failures on the open
    session's rolls, which reads them."""
    campaign = play(system, end=False)
    events = recorder().page(campaign.pk, after=0, limit=10_000)
    monkeypatch.setattr(Paged, "forget_payload", lambda event: None)  # keep what was decoded
    for name in ("olga", "gm"):
        viewer = Membership.objects.get(campaign=campaign, user=users[name])
        SharedPage(events).texts_for(viewer)
    decoded = {event.type for event in events if "_payload" in event.__dict__}
    if system == "storyteller":
        assert decoded == set()
    else:
        assert "check.rolled" in decoded and all(kind.startswith("check.") for kind in decoded)
    assert {"session.started", "character.created"} <= {e.type for e in events} - decoded


def test_a_written_page_keeps_no_decoded_payload(play, users):  # noqa: F811
    """Each event's decoded payload is dropped once the event is written (what the garbage
    collector traversed, page after page); another class of viewer decodes it again, alike."""
    campaign = play("cofd", end=False)
    events = recorder().page(campaign.pk, after=0, limit=10_000)
    page = SharedPage(events)
    gm, alice = (Membership.objects.get(campaign=campaign, user=users[n]) for n in ("gm", "alice"))
    first = page.texts_for(gm), page.texts_for(alice)
    assert not [event.seq for event in events if "_payload" in event.__dict__]
    assert (page.texts_for(gm), page.texts_for(alice)) == first
    fresh = recorder().page(campaign.pk, after=0, limit=10_000)
    assert (SharedPage(fresh).texts_for(gm), SharedPage(fresh).texts_for(alice)) == first


def test_a_payload_with_unescaped_text_is_encoded_again(play, users):  # noqa: F811
    campaign = play("cofd", end=False)
    alice = users["alice"]
    hero = campaign.characters.get(name="Hero")
    check = rolls.check_roll(
        campaign=campaign,
        actor=alice,
        request={"character": str(hero.pk), **TRAITS["cofd"], "label": UNESCAPED},
    )
    (event,) = recorder().page(campaign.pk, after=check.seq - 1, limit=1)
    assert UNESCAPED in event.payload_text  # the canonical text keeps it raw
    gm = Membership.objects.get(campaign=campaign, user=users["gm"])
    ((text, _),) = SharedPage([event]).texts_for(gm)
    assert UNESCAPED not in text and json.loads(text)["payload"]["label"] == UNESCAPED
    if connection.vendor == "postgresql":  # the text bound to the jsonb is the one read
        assert event.payload_text == json.dumps(
            event.payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
