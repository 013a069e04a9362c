"""The GM's call fixes the whole check (item 7 of #12): the player answers with the character
(when the call names several of theirs) and, with manual dice, the faces. Nothing else."""

from __future__ import annotations

import uuid

import pytest

from tests.rolls.checks.conftest import first_roll
from tests.rolls.checks.rulebook import refused_roll


def _call(t, request, who=("alice",)):
    ids = [str(t.characters[w].pk) for w in who]
    return t.post("gm", "calls/", {"characters": ids, "request": request}, expect=201)


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"modifiers": [8]}, "modifiers"),
        ({"automatic": True}, "automatic"),
        ({"difficulty": 3}, "difficulty"),
        ({"traits": ["Physical", "Lockpicking"]}, "traits"),
        ({"visibility": "private"}, "visibility"),
        ({"stressful": False}, "stressful"),
        ({"task": "other"}, "task"),
    ],
)
def test_a_storyteller_answer_cannot_add_anything_the_call_left_out(table, extra, field):
    t = table("storyteller")
    call = _call(t, {"pool": 2, "difficulty": 8})
    refused_roll(t, "alice", 400, field, call=call["id"], faces=[2, 3], **extra)
    answer = t.roll("alice", call=call["id"], faces=[9, 1])
    assert first_roll(answer)["check"] | {"pool": 2, "difficulty": 8} == first_roll(answer)["check"]
    assert answer["outcome"] == "failure"


def test_a_cofd_call_under_pressure_keeps_its_retry_penalty(table):
    t = table("cofd")
    ritual = {"traits": ["Wits", "Occult"], "task": "ritual", "under_pressure": True}
    t.roll("alice", faces=[2] * 5, **ritual)
    call = _call(t, ritual)
    for extra, field in (
        ({"extended": True}, "extended"),
        ({"rote": True}, "rote"),
        ({"again": 8}, "again"),
        ({"modifiers": [{"group": "equipment", "value": 5}]}, "modifiers"),
        ({"under_pressure": False}, "under_pressure"),
        ({"helpers": [1]}, "helpers"),
    ):
        refused_roll(t, "alice", 400, field, call=call["id"], faces=[2] * 9, **extra)
    answer = first_roll(t.roll("alice", call=call["id"], faces=[2] * 4))
    assert answer["check"]["pool"] == 4 and answer["rules"]["attempt"] == 2
    assert (answer["check"]["rote"], answer["check"]["again"]) == (False, 10)


def test_the_answer_names_the_character_when_the_call_leaves_it_open(table, users):
    from campaign import services

    t = table("cofd")
    second = services.create_character(
        campaign=t.campaign, actor=users["gm"], name="Alice's second",
        traits={"attributes": {"Wits": 1}}, owner_id=users["alice"].pk,
    )  # fmt: skip
    ids = [str(t.characters["alice"].pk), str(second.pk)]
    call = t.post("gm", "calls/", {"characters": ids, "request": {"pool": 2}}, expect=201)
    refused_roll(t, "alice", 400, "character", call=call["id"], character=None, faces=[2, 3])
    first = t.roll("alice", call=call["id"], character=str(second.pk), faces=[2, 3])
    assert first["character"] == str(second.pk)
    refused_roll(t, "alice", 409, "call", call=call["id"], character=str(second.pk), faces=[2, 3])


@pytest.mark.parametrize(
    "spell",
    [
        lambda u: str(u).upper(),
        lambda u: "{" + str(u) + "}",
        lambda u: "urn:uuid:" + str(u),
        lambda u: u.hex,
        lambda u: u.hex.upper(),
    ],
)
def test_a_call_is_answered_once_per_character_however_the_id_is_spelled(table, spell):
    t = table("cofd")
    call = _call(t, {"pool": 2}, who=("alice", "boris"))
    alice = t.characters["alice"].pk
    t.roll("alice", call=call["id"], faces=[2, 3])
    refused_roll(t, "alice", 409, "call", call=call["id"], character=spell(alice), faces=[2, 3])
    refused_roll(t, "alice", 409, "call", call=spell(uuid.UUID(call["id"])), faces=[2, 3])
    answered = t.get("gm", "calls/")[0]["answered"]
    assert list(answered) == [str(alice)], "one answer, under the canonical id"


def test_ids_are_normalised_wherever_a_character_is_named(table):
    t = table("cofd")
    alice = t.characters["alice"].pk
    check = t.roll("alice", character="{" + str(alice).upper() + "}", pool=1, faces=[8])
    assert check["character"] == str(alice)
    refused_roll(t, "alice", 400, "character", character="not-an-id", pool=1, faces=[8])


def test_the_answer_may_spend_the_characters_own_willpower(table):
    """README decision: Willpower is the player's resource, declared with the roll, so an answer
    may spend it; everything about the check itself stays the call's."""
    t = table("storyteller")
    t.clients["gm"].patch(
        f"{t.url}/characters/{t.characters['alice'].pk}/",
        {"resources": {"willpower": 1}},
        format="json",
    )
    call = _call(t, {"pool": 2, "difficulty": 8})
    answer = t.roll("alice", call=call["id"], willpower=True, faces=[9, 1])
    assert (answer["outcome"], first_roll(answer)["result"]["successes"]) == ("success", 1)
    assert t.character("alice").resources["willpower"] == 0


def test_a_call_whose_task_no_answer_could_pass_is_refused_when_called(table):
    """Found by a review: a call took a task of more than 120 characters, and then refused
    every answer, stuck until the GM closed it; it is refused when called, naming it."""
    t = table("storyteller")
    body = {
        "characters": [str(t.characters["alice"].pk)],
        "request": {"traits": ["Physical"], "task": "t" * 121},
    }
    before = t.events()
    answer = t.clients["gm"].post(f"{t.url}/calls/", body, format="json")
    assert answer.status_code == 400 and "request.task" in answer.json(), answer.json()
    assert t.events() == before
