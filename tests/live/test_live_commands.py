"""Commands over the socket go through the same services as REST; bad frames get an error frame
naming the field, and the connection stays open."""

from __future__ import annotations

import httpx
import pytest

from campaign.idempotency import HEADER, MAX_KEY, SOCKET
from campaign.limits import MAX_STRING
from rolls.models import Check
from rolls.systems import MAX_FACES
from tests.live.conftest import SUCCESS, WAIT, in_db

pytestmark = pytest.mark.django_db(transaction=True)


def check_of(campaign_id: int, seq: int) -> Check:
    return Check.objects.get(campaign_id=campaign_id, seq=seq)


async def test_a_roll_and_its_follow_up_over_the_socket(server, table, feeds):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    answer = await alice.command("roll", request=table.roll("alice", label="the ritual"))
    assert answer["type"] == "result"
    seq = answer["data"]["seq"]
    [event] = [e for e in await alice.through(seq) if e["seq"] == seq]
    assert event["type"] == "check.rolled" and event["payload"]["label"] == "the ritual"
    check = await in_db(check_of, table.id, seq)
    assert (check.outcome, check.actor_id) == ("failure", table.users["alice"].pk)

    taken = await alice.command("dramatic_failure", seq=seq)
    assert taken["data"] == {"check": seq}
    followup = (await alice.through(seq + 1))[-1]
    assert followup["type"] == "check.dramatic_failure_taken"
    assert (await in_db(check_of, table.id, seq)).outcome == "dramatic_failure"

    refused = await alice.command("dramatic_failure", seq=seq)  # already one
    assert refused["type"] == "error" and refused["field"].startswith("check")
    odds = await alice.command("odds", request=table.roll("alice"))
    assert odds["type"] == "result" and odds["data"]["check"]["pool"] == 5
    assert 0 < odds["data"]["odds"]["outcomes"]["failure"] < 1


async def test_the_gms_call_for_a_check_reaches_the_named_players_who_answer_it(
    server, table, feeds
):
    gm = await feeds.open(server.url(table.id), table.tokens["gm"])
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    boris = await feeds.open(server.url(table.id), table.tokens["boris"])
    hero = str(table.characters["alice"].pk)

    answer = await gm.command(
        "call", characters=[hero], request={"traits": ["Wits", "Occult"], "label": "Listen"}
    )
    assert answer["type"] == "result", answer
    call, seq = answer["data"]["call"], answer["data"]["seq"]
    for feed in (alice, boris):  # on every screen; alice's client shows her the roll button
        event = (await feed.through(seq))[-1]
        assert event["type"] == "check.called"
        assert event["payload"]["call_id"] == call and event["payload"]["character_ids"] == [hero]

    refused = await boris.command(
        "roll", request={"call": call, "character": str(table.characters["boris"].pk)}
    )
    assert (refused["type"], refused["field"]) == ("error", "call")
    answer = {"call": call, "character": hero, "faces": SUCCESS}
    rolled = await alice.command("roll", request=answer)
    assert rolled["type"] == "result", rolled
    event = (await gm.through(rolled["data"]["seq"]))[-1]
    assert event["payload"]["call_id"] == call and event["payload"]["label"] == "Listen"
    assert (await gm.command("close_call", call=call))["type"] == "error"  # answered: closed


BAD_FRAMES = [  # frame, the field its error names, the code
    ("not json", "frame", "invalid"),
    ("[1, 2]", "frame", "invalid"),
    ('{"type": "shout", "ref": "x"}', "type", "invalid"),
    ('{"ref": "x"}', "type", "invalid"),
    ('{"type": "roll", "ref": "x"}', "request", "invalid"),
    ('{"type": "roll", "ref": "x", "request": {"traits": ["Wits"]}}', "character", "invalid"),
    ('{"type": "dramatic_failure", "ref": "x", "seq": "7"}', "seq", "invalid"),
    ('{"type": "reveal", "ref": "x", "seq": 3}', "role", "permission_denied"),
    ('{"type": "fetch", "ref": "x", "from": 0, "to": 2}', "from", "invalid"),
    ('{"type": "ping", "ref": {"a": 1}}', "ref", "invalid"),
]


async def test_each_bad_frame_gets_an_error_naming_the_field_and_the_socket_stays_open(
    server, table, feeds
):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    for frame, field, code in BAD_FRAMES:
        await alice.send(frame)
        error = await alice.until(lambda f: f["type"] == "error")
        assert (error["field"], error["code"]) == (field, code), frame
        assert error["message"], frame
        assert error["ref"] == ("x" if '"ref": "x"' in frame else None), frame
    # Still open and working: a good command is answered, and nothing else was sent.
    answer = await alice.command("roll", request=table.roll("alice"))
    assert answer["type"] == "result"
    assert [f["type"] for f in alice.others()] == ["caught_up"] + ["error"] * len(BAD_FRAMES) + [
        "result"
    ]


async def test_the_rules_refusals_and_binary_frames_are_errors_too(server, table, feeds):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    olga = await feeds.open(server.url(table.id), table.tokens["olga"])

    unknown = await alice.command("roll", request=table.roll("alice", traits=["Wits", "Flying"]))
    assert (unknown["type"], unknown["field"]) == ("error", "traits")
    theirs = await alice.command("roll", request=table.roll("boris"))
    assert (theirs["field"], theirs["code"]) == ("character", "permission_denied")
    watching = await olga.command("roll", request=table.roll("alice"))
    assert (watching["field"], watching["code"]) == ("role", "permission_denied")

    await alice.ws.send(b"\x00\x01")
    binary = await alice.until(lambda f: f["type"] == "error")
    assert binary["field"] == "frame"
    assert (await alice.command("ping"))["type"] == "pong"


async def test_a_bad_after_is_reported_and_the_feed_starts_at_the_head(server, table, feeds):
    head = table.campaign.head_seq
    alice = await feeds.open(server.url(table.id, after="soon"), table.tokens["alice"])
    assert [f["type"] for f in alice.frames] == ["error", "caught_up"]
    assert alice.frames[0]["field"] == "after"
    assert alice.frames[1]["head"] == head and alice.events == []

    ahead = await feeds.open(server.url(table.id, after=head + 5), table.tokens["boris"])
    assert ahead.frames[0]["field"] == "after" and ahead.frames[1]["head"] == head


async def test_a_repeated_request_id_rolls_once_and_answers_the_same(server, table, feeds):
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    request = table.roll("alice", label="once")
    first = await alice.command("roll", request=request, request_id="tap-1")
    again = await alice.command("roll", request=request, request_id="tap-1")
    assert first["type"] == again["type"] == "result"
    assert again["data"] == first["data"]
    other = await alice.command("roll", request=request, request_id="tap-2")
    assert other["data"]["seq"] == first["data"]["seq"] + 1
    reused = await alice.command("roll", request={**request, "label": "x"}, request_id="tap-1")
    assert (reused["type"], reused["code"], reused["field"]) == (
        "error",
        "idempotency_key_reused",
        "request_id",
    )
    bad = await alice.command("roll", request=request, request_id="")
    assert bad["type"] == "error" and bad["field"] == "request_id"
    rolled = await in_db(
        lambda: Check.objects.filter(campaign_id=table.id, label__in=["once", "x"]).count()
    )
    assert rolled == 2


async def _rest_roll(server, table, key: str, label: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=WAIT) as client:
        return await client.post(
            f"http://127.0.0.1:{server.port}/api/campaigns/{table.id}/checks/",
            json=table.roll("alice", label=label),
            headers={"Authorization": f"Token {table.tokens['alice']}", HEADER: key},
        )


async def test_a_request_id_is_not_the_rest_key_of_the_same_text(server, table, feeds):
    """docs/websocket.md: socket keys are distinct from REST's. A request_id equal to a REST
    Idempotency-Key (and the other way round) was refused as idempotency_key_reused."""
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    assert (await _rest_roll(server, table, "k-1", "rest")).status_code == 201
    request = table.roll("alice", label="socket")
    socket = await alice.command("roll", request=request, request_id="k-1")
    assert socket["type"] == "result", socket
    repeated = await alice.command("roll", request=request, request_id="k-1")
    assert repeated["data"] == socket["data"]  # each channel still writes once
    other = await alice.command("roll", request=request, request_id="k-2")
    rest = await _rest_roll(server, table, "k-2", "rest")
    assert rest.status_code == 201 and "Idempotent-Replayed" not in rest.headers, rest.text
    assert rest.json()["seq"] > other["data"]["seq"]
    again = await _rest_roll(server, table, "k-2", "rest")
    assert again.headers["Idempotent-Replayed"] == "true" and again.json() == rest.json()
    labels = await in_db(
        lambda: sorted(Check.objects.filter(campaign_id=table.id).values_list("label", flat=True))
    )
    assert labels == ["rest", "rest", "socket", "socket"]


async def test_a_request_id_is_a_string_of_at_most_200_characters(server, table, feeds):
    """docs/websocket.md: the frame's string limit; with the socket's prefix, the stored key
    fits the column (MAX_KEY) still."""
    assert MAX_STRING + len(SOCKET) <= MAX_KEY
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    key = "k" * MAX_STRING
    answer = await alice.command("roll", request=table.roll("alice"), request_id=key)
    assert answer["type"] == "result", answer
    answer = await alice.command("roll", request=table.roll("alice"), request_id=key + "k")
    assert (answer["type"], answer["field"]) == ("error", "request_id")


async def test_a_roll_takes_more_faces_than_other_lists_hold(server, table, feeds):
    """A frame has the limits of a REST body, faces included: up to MAX_FACES, not 50."""
    alice = await feeds.open(server.url(table.id), table.tokens["alice"])
    request = table.roll("alice", pool=55, faces=[2] * 60)  # Wits 3 + Occult 2 + 55
    answer = await alice.command("roll", request=request)
    assert answer["type"] == "result", answer
    check = await in_db(check_of, table.id, answer["data"]["seq"])
    assert len(check.data["rolls"][0]["faces"]) == 60
    too_many = {**request, "faces": [2] * (MAX_FACES + 1)}
    answer = await alice.command("roll", request=too_many)
    assert (answer["type"], answer["field"]) == ("error", "request.faces")
