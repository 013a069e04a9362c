"""Public events about a sheet or a task say only what the GM did, not what hidden rolls left
behind: a GM's resource edit (`character.changed`) names only the resources it changed, at
every door a player or an observer reads an event through (the log, the export, the live frame,
the socket's catch-up). Found by a review: the event held the whole merged sheet, so editing
Willpower told the table the Beat a blind dramatic failure had earned."""

from __future__ import annotations

import json
from typing import Any

import pytest

from campaign.models import Character
from eventlog.models import Event
from rolls.live import catchup
from rolls.live.broadcast import messages_for
from tests.api.conftest import World
from tests.eventlog.tables import assert_rebuild_equals_live

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
        caught_up += json.loads(page.text)["events"]
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


def test_a_gm_editing_willpower_does_not_tell_the_table_a_blind_rolls_beat(build_world) -> None:
    w = build_world(
        "cofd",
        options={"manual_dice": True, "intentional_dramatic_failure": "unlimited"},
        rolls=False,
    )
    hero = w.characters["alice"]
    seq = w.roll("gm", faces=COFD_FAILURE, visibility="blind", character=str(hero.pk))
    assert w.client("gm").post(w.url(f"checks/{seq}/dramatic-failure/")).status_code == 200
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
        assert all(p["resources"] == {"willpower": 2} for p in shown), (who, shown)
        sheet = w.client(who).get(w.url(f"characters/{hero.pk}/")).json()["resources"]
        assert sheet == {"willpower": 2, "beats": 0}, who
    frames = _live_frames(w, "character.changed")
    assert frames and all(f["payload"]["resources"] == {"willpower": 2} for f in frames), frames
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
        assert last["resources"] == {"beats": 1}, (who, last)
    assert _live_frames(w, "character.changed")[0]["payload"]["resources"] == {"beats": 1}
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


@pytest.mark.parametrize("attempt", ["blind", "private", "public", "revealed"])
def test_a_task_reset_names_the_task_only_to_those_who_saw_an_attempt_at_it(
    build_world, attempt: str
) -> None:
    """The GM resets a task whose failed attempt was a hidden roll: the reset (which names the
    task, and tells that an attempt at it failed) is the GMs' alone, a stub to the rest of the
    table, as the roll is; after a public or revealed attempt it is everyone's."""
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

    told = attempt in ("public", "revealed")
    assert [p["task"] for p in _payloads(w, "gm", "task.reset")] == ["the vault door"] * 3
    for who in TABLE:
        shown = _payloads(w, who, "task.reset")
        assert [p["task"] for p in shown] == (["the vault door"] * 3 if told else []), who
        events = w.client(who).get(w.url("events/?type=task.reset")).json()
        assert len(events) == 1 and events[0]["redacted"] is not told, who
    frames = [json.dumps(frame) for frame in _live_frames(w, "task.reset")]
    if told:  # one frame for the whole table
        assert len(frames) == 1 and "vault" in frames[0], frames
    else:  # the GMs' frame names it; the table's is a stub
        assert sorted("vault" in frame for frame in frames) == [False, True], frames
