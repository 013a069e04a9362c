"""Public events about a sheet or a task say only what the GM did, not what hidden rolls left
behind: a GM's resource edit (`character.changed`) names only the resources it changed, at
every door a player or an observer reads an event through (the log, the export, the live frame,
the socket's catch-up). Found by a review: the event held the whole merged sheet, so editing
Willpower told the table the Beat a blind dramatic failure had earned."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import transaction

from campaign.models import Character
from eventlog.models import Event
from rolls.live import catchup
from rolls.live.broadcast import messages_for
from tests.api.conftest import World
from tests.eventlog.tables import assert_rebuild_equals_live
from tests.live.conftest import page_events

pytestmark = pytest.mark.django_db

COFD_FAILURE = [1, 2, 3, 4, 5]
TABLE = ("alice", "boris", "olga")  # the owner, another player, an observer


def _payloads(w: World, who: str, event_type: str) -> list[dict[str, Any]]:
    """``event_type``'s payloads as ``who`` reads them through each door, by door."""
    membership = w.campaign.memberships.get(user=w.users[who])
    w.campaign.refresh_from_db()
    head = (w.campaign.head_seq, w.campaign.head_hash)
    caught_up = []
    after = 0
    while (page := catchup.page_after(membership, after, head[0], head)) is not None:
        caught_up += page_events(page)
        after = page.last
    catchup.forget()
    doors = {
        "log": w.client(who).get(w.url(f"events/?type={event_type}")).json(),
        "export": w.client(who).get(w.url("export/")).json()["events"],
        "catch-up": caught_up,
    }
    return [
        {"door": door, **event["payload"]}
        for door, events in doors.items()
        for event in events
        if event["type"] == event_type and not event.get("redacted")
    ]


def _live_frames(w: World, event_type: str) -> list[dict[str, Any]]:
    event = Event.objects.filter(campaign=w.campaign, type=event_type).last()
    return [json.loads(message["text"])["event"] for _group, message in messages_for(event)]


def _blind_beat(build_world) -> tuple[World, Any, int]:
    """A CofD table where the GM's blind roll for alice's character was turned into a dramatic
    failure: her Beat is the truth, and hidden from the rest of the table."""
    w = build_world(
        "cofd",
        options={"manual_dice": True, "intentional_dramatic_failure": "unlimited"},
        rolls=False,
    )
    hero = w.characters["alice"]
    seq = w.roll("gm", faces=COFD_FAILURE, visibility="blind", character=str(hero.pk))
    assert w.client("gm").post(w.url(f"checks/{seq}/dramatic-failure/")).status_code == 200
    return w, hero, seq


def test_a_gm_editing_willpower_does_not_tell_the_table_a_blind_rolls_beat(build_world) -> None:
    w, hero, _ = _blind_beat(build_world)
    # The GM's editor sends the whole sheet as the GM sees it: the Beat included.
    sent = {**Character.objects.get(pk=hero.pk).resources, "willpower": 2}
    assert sent["beats"] == 1
    edited = w.client("gm").patch(
        w.url(f"characters/{hero.pk}/"), {"resources": sent}, format="json"
    )
    assert edited.status_code == 200, edited.content
    assert edited.json()["resources"] == {"willpower": 2, "beats": 1}  # the GM's truth

    for who in TABLE:
        shown = _payloads(w, who, "character.changed")
        assert {p["door"] for p in shown} == {"log", "export", "catch-up"}, who
        assert all(p["resource_changes"] == {"willpower": 2} for p in shown), (who, shown)
        assert all("resources" not in p for p in shown), (who, shown)
        sheet = w.client(who).get(w.url(f"characters/{hero.pk}/")).json()["resources"]
        assert sheet == {"willpower": 2, "beats": 0}, who
    frames = _live_frames(w, "character.changed")
    assert frames and all(f["payload"]["resource_changes"] == {"willpower": 2} for f in frames)
    assert_rebuild_equals_live(w.cid)  # the projectors merge what the event names
    assert Character.objects.get(pk=hero.pk).resources == {"willpower": 2, "beats": 1}


def test_a_gm_awarding_a_beat_does_not_tell_the_table_a_private_willpower_spend(
    build_world,
) -> None:
    w = build_world("cofd", options={"manual_dice": True}, rolls=False)
    hero = w.characters["alice"]
    gm = w.client("gm")
    gm.patch(w.url(f"characters/{hero.pk}/"), {"resources": {"willpower": 5}}, format="json")
    w.roll("alice", faces=[*COFD_FAILURE, 1, 2, 3], visibility="private", willpower=True)
    truth = gm.get(w.url(f"characters/{hero.pk}/")).json()["resources"]
    assert truth == {"willpower": 4, "beats": 0}

    awarded = gm.patch(
        w.url(f"characters/{hero.pk}/"), {"resources": {**truth, "beats": 1}}, format="json"
    )
    assert awarded.status_code == 200, awarded.content

    for who in ("boris", "olga"):  # the spend is hidden from them
        assert w.client(who).get(w.url(f"characters/{hero.pk}/")).json()["resources"] == {
            "willpower": 5,
            "beats": 1,
        }, who
        last = [p for p in _payloads(w, who, "character.changed") if p["door"] == "log"][-1]
        assert last["resource_changes"] == {"beats": 1}, (who, last)
    assert _live_frames(w, "character.changed")[0]["payload"]["resource_changes"] == {"beats": 1}
    assert_rebuild_equals_live(w.cid)


def test_a_gm_setting_the_resource_a_blind_roll_changed_tells_only_the_change(
    build_world,
) -> None:
    """Found by the day's review: the edit recorded the value set ("Beats 2"), which the table,
    whose sheet shows the blind roll's Beat left out, could compare with its own (1). It records
    the change (+1), which the sheets add alike."""
    w, hero, seq = _blind_beat(build_world)
    edited = w.client("gm").patch(
        w.url(f"characters/{hero.pk}/"), {"resources": {"beats": 2}}, format="json"
    )
    assert edited.json()["resources"]["beats"] == 2  # the GM's truth
    for who in TABLE:
        assert w.client(who).get(w.url(f"characters/{hero.pk}/")).json()["resources"]["beats"] == 1
        shown = _payloads(w, who, "character.changed")
        assert shown and all(p["resource_changes"] == {"beats": 1} for p in shown), (who, shown)
    assert w.client("gm").post(w.url(f"checks/{seq}/reveal/")).status_code == 200
    for who in TABLE:  # revealed: every sheet is the truth
        assert w.client(who).get(w.url(f"characters/{hero.pk}/")).json()["resources"]["beats"] == 2
    assert_rebuild_equals_live(w.cid)


def test_a_resource_edit_that_changes_nothing_writes_no_event(build_world) -> None:
    w = build_world("cofd", options={"manual_dice": True}, rolls=False)
    hero = w.characters["alice"]
    before = w.head()
    same = w.client("gm").patch(
        w.url(f"characters/{hero.pk}/"), {"resources": dict(hero.resources)}, format="json"
    )
    assert same.status_code == 200, same.content
    assert w.head() == before


# Who is told of a reset, by the attempt it resets (the GM rolls it for alice's character).
TOLD = {
    "public": {"alice", "boris", "olga"},
    "revealed": {"alice", "boris", "olga"},
    "private": {"alice"},  # its audience: the character's owner
    "blind": set(),
}


@pytest.mark.parametrize("attempt", list(TOLD))
def test_a_task_reset_is_as_visible_as_the_failure_it_resets(build_world, attempt: str) -> None:
    """The GM resets a task whose counted failure was a hidden roll: the reset (which names the
    task, and tells that an attempt at it failed) is as visible as that roll, a stub to the
    rest of the table (it was public, naming a blind roll's task); after a public or revealed
    failure it is everyone's; revealing the roll later shows the reset too."""
    w = build_world("storyteller", options={"manual_dice": True}, rolls=False)
    hero = str(w.characters["alice"].pk)
    seq = w.roll(
        "gm",
        faces=[2, 3, 4, 5, 2],
        visibility={"public": "public", "blind": "blind"}.get(attempt, "private"),
        task="the vault door",
        character=hero,
    )
    if attempt == "revealed":
        assert w.client("gm").post(w.url(f"checks/{seq}/reveal/")).status_code == 200
    reset = w.client("gm").post(
        w.url("tasks/reset/"), {"character": hero, "task": "the vault door"}, format="json"
    )
    assert reset.status_code == 204, reset.content

    assert [p["task"] for p in _payloads(w, "gm", "task.reset")] == ["the vault door"] * 3
    for who in TABLE:
        told = who in TOLD[attempt]
        shown = _payloads(w, who, "task.reset")
        assert [p["task"] for p in shown] == (["the vault door"] * 3 if told else []), who
        events = w.client(who).get(w.url("events/?type=task.reset")).json()
        assert len(events) == 1 and events[0]["redacted"] is not told, who
    frames = [json.dumps(frame) for frame in _live_frames(w, "task.reset")]
    assert sum("vault" in frame for frame in frames) >= 1, frames  # the GMs' at least
    if TOLD[attempt] != set(TABLE):
        assert any("vault" not in frame for frame in frames), frames  # a stub for the rest
        assert w.client("gm").post(w.url(f"checks/{seq}/reveal/")).status_code == 200
        for who in TABLE:  # the roll revealed: its reset with it
            assert [p["task"] for p in _payloads(w, who, "task.reset")] == ["the vault door"] * 3


def test_a_reset_after_a_public_success_tells_the_table_nothing_of_a_blind_failure(
    build_world,
) -> None:
    """Found by a review: a public success clears the counter, so a counter to reset after it
    can only come from a hidden failure; a public reset then told the table of it."""
    w = build_world("storyteller", options={"manual_dice": True}, rolls=False)
    hero = str(w.characters["alice"].pk)
    w.roll("alice", faces=[8, 9, 10, 8, 9], task="the vault door")  # a public success
    w.roll("gm", faces=[2, 3, 4, 5, 2], visibility="blind", task="the vault door", character=hero)
    body = {"character": hero, "task": "the vault door"}
    assert w.client("gm").post(w.url("tasks/reset/"), body, format="json").status_code == 204
    for who in TABLE:
        assert _payloads(w, who, "task.reset") == [], who


def test_an_edit_logged_with_the_values_set_still_sets_them(build_world) -> None:
    """Logs written before the changes were record the values the GM set: live and rebuilt,
    the sheet takes them (alongside the newer events' changes)."""
    from eventlog.stream import append_event, lock_stream

    w = build_world("cofd", rolls=False)
    hero = w.characters["alice"]
    with transaction.atomic():
        append_event(
            campaign=lock_stream(w.cid),
            type="character.changed",
            payload={"character_id": str(hero.pk), "resources": {"willpower": 3, "beats": 2}},
            actor_id=w.users["gm"].pk,
            character_id=hero.pk,
        )
    w.client("gm").patch(
        w.url(f"characters/{hero.pk}/"), {"resources": {"beats": 5}}, format="json"
    )
    assert Character.objects.get(pk=hero.pk).resources == {"willpower": 3, "beats": 5}
    assert_rebuild_equals_live(w.cid)


def test_a_gm_spending_beats_after_a_blind_rolls_beat_shows_no_negative_beats(build_world) -> None:
    """Found by a review: the GM sets Beats to 0 (spent) after a blind roll's Beat: the change
    is -1, and the table, whose sheet left that Beat out, saw -1 Beats, which told of it."""
    w, hero, _ = _blind_beat(build_world)
    w.client("gm").patch(
        w.url(f"characters/{hero.pk}/"), {"resources": {"beats": 0}}, format="json"
    )
    for who in TABLE:
        assert w.client(who).get(w.url(f"characters/{hero.pk}/")).json()["resources"]["beats"] == 0
        state = w.client(who).get(w.url("state/")).json()
        mine = next(c for c in state["characters"] if c["id"] == str(hero.pk))
        assert mine["resources"]["beats"] == 0, who
